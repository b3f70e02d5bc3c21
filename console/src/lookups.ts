/** Names for ids (accounts, rate plans, agents), so that tables read "Acme", not "acct_01…". */
import type { Api, Page } from "./api";

/** Reads up to `maxPages` pages of 100 and maps id → name; an id beyond that is simply shown as itself. */
export async function namesOf(
	api: Api,
	path: "/accounts" | "/pricing/rate-plans" | "/agents",
	plural: "accounts" | "rate_plans" | "agents",
	signal?: AbortSignal,
	maxPages = 5,
): Promise<Map<string, string>> {
	const names = new Map<string, string>();
	for (let page = 0; page < maxPages; page++) {
		const list = await api.get<Page & Record<string, { id: string; name: string }[]>>(
			path,
			{ limit: 100, offset: page * 100 },
			signal,
		);
		for (const row of list[plural] ?? []) names.set(row.id, row.name);
		if ((page + 1) * 100 >= list.total) break;
	}
	return names;
}

export function nameOr(names: Map<string, string>, id: string | null): string {
	if (id === null) return "—";
	return names.get(id) ?? id;
}
