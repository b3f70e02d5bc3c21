import { env } from "cloudflare:workers";

/** Every table of the service's D1 database (not SQLite's or the migration runner's own). */
export async function userTables(): Promise<string[]> {
	const { results } = await env.DB.prepare(
		"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' ORDER BY name",
	).all<{ name: string }>();
	return results.map((r) => r.name);
}

/**
 * A fingerprint of the stored state: per table, its row count and a hash of all its rows. Two equal fingerprints
 * mean nothing was written (rate-limit and accumulator state live in Durable Objects, not here).
 */
export async function dbFingerprint(except: string[] = []): Promise<Record<string, string>> {
	const tables = (await userTables()).filter((table) => !except.includes(table));
	const results = await env.DB.batch(tables.map((table) => env.DB.prepare(`SELECT * FROM "${table}"`)));
	const out: Record<string, string> = {};
	for (const [i, table] of tables.entries()) {
		// A key's last use is touched by any request it makes, refused or not.
		const rows = ((results[i]?.results ?? []) as Record<string, unknown>[]).map(
			({ last_used_at: _, ...row }) => JSON.stringify(row),
		);
		const text = JSON.stringify(rows.sort());
		const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
		out[table] = `${rows.length}:${btoa(String.fromCharCode(...new Uint8Array(digest))).slice(0, 16)}`;
	}
	return out;
}
