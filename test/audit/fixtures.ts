import { env } from "cloudflare:workers";

export interface StoredRecord {
	seq: number;
	id: string;
	environment: string;
	at: string;
	actor_type: string;
	key_id: string | null;
	key_prefix: string | null;
	action: string;
	resource_type: string;
	resource_id: string;
	request_id: string | null;
	changes: Record<string, unknown[]>;
}

/** Stored records, oldest first, of a resource (or of every resource). */
export async function recordsOf(resourceId?: string): Promise<StoredRecord[]> {
	const { results } = await env.DB.prepare(
		"SELECT * FROM audit_records WHERE ?1 IS NULL OR resource_id = ?1 ORDER BY seq",
	)
		.bind(resourceId ?? null)
		.all<Record<string, unknown>>();
	return results.map((r) => ({ ...r, changes: JSON.parse(r.changes as string) }) as StoredRecord);
}

export async function recordCount(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM audit_records").first<{ n: number }>();
	return row?.n ?? 0;
}

/** Every stored record as the text the table holds, for searching secrets in. */
export async function allRecordText(): Promise<string> {
	const { results } = await env.DB.prepare("SELECT * FROM audit_records").all();
	return JSON.stringify(results);
}

/** The display prefix stored for a key. */
export const prefixOf = (secret: string) => `${secret.slice(0, secret.indexOf("_", 3) + 7)}…`;
