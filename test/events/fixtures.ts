/** Reading the R2 archive of raw events (§15) in tests. */
import { env } from "cloudflare:workers";

export interface ArchivedEvent {
	id: string;
	kind: "action" | "outcome";
	agent_key: string;
	type: string;
	value: number | null;
	metadata: Record<string, unknown>;
	timestamp: string;
	received_at: string;
	subscription_id: string | null;
	billable: boolean;
}

export async function gunzipText(body: ReadableStream | ArrayBuffer): Promise<string> {
	const stream = body instanceof ArrayBuffer ? new Blob([body]).stream() : body;
	return await new Response(stream.pipeThrough(new DecompressionStream("gzip"))).text();
}

/** Every archived object's key, of one environment or all. */
export async function archiveKeys(prefix = "events/"): Promise<string[]> {
	const keys: string[] = [];
	let cursor: string | undefined;
	do {
		const page = await env.EVENTS_ARCHIVE.list({ prefix, cursor });
		keys.push(...page.objects.map((object) => object.key));
		cursor = page.truncated ? page.cursor : undefined;
	} while (cursor !== undefined);
	return keys;
}

export async function readArchiveObject(key: string): Promise<ArchivedEvent[]> {
	const object = await env.EVENTS_ARCHIVE.get(key);
	if (object === null) throw new Error(`No archive object ${key}`);
	const text = await gunzipText(await object.arrayBuffer());
	return text
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as ArchivedEvent);
}

/** The events an accumulator archived, sorted by id (each once per object it is in). */
export async function archivedEvents(accumulator: string): Promise<ArchivedEvent[]> {
	const environment = accumulator.split(":")[0];
	const keys = (await archiveKeys(`events/${environment}/`)).filter((key) =>
		key.includes(`/${accumulator}/`),
	);
	const events = (await Promise.all(keys.map(readArchiveObject))).flat();
	return events.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
