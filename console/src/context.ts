import type { Api } from "./api";
import type { Identity } from "./session";

/** What a page gets: the API, who is signed in, its route parameters, and its own element to draw into. */
export interface PageContext {
	api: Api;
	identity: Identity;
	/** The path's parameters, e.g. the invoice id of #/invoices/inv_…. */
	params: string[];
	/** The hash's query: #/invoices?status=open. */
	query: URLSearchParams;
	/** The page's element. A page that is left keeps drawing into its own element, which is no longer shown. */
	view: HTMLElement;
	/** Aborted when the reader leaves the page. */
	signal: AbortSignal;
	/** Goes to another hash route (or the same one with other query values). */
	go(hash: string): void;
	/** Draws the current route again, e.g. after a change. */
	refresh(): void;
}

/** The hash of `path` with `query`, leaving out empty values. */
export function hashOf(path: string, query: Record<string, string | number | undefined | null> = {}): string {
	const params = new URLSearchParams();
	for (const [name, value] of Object.entries(query)) {
		if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
	}
	const text = params.toString();
	return `#${path}${text ? `?${text}` : ""}`;
}

export function pageOffset(query: URLSearchParams): number {
	const offset = Number(query.get("offset") ?? 0);
	return Number.isInteger(offset) && offset >= 0 ? offset : 0;
}
