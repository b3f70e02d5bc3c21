/**
 * Atomic D1 batches that mix drizzle queries with raw SQL. drizzle's own `db.batch` cannot bind a raw
 * statement that has parameters (`db.run(sql`…${x}`)` carries no prepared statement to bind), yet several writes
 * here need raw SQL: bulk inserts through one `json_each` parameter (D1 allows 100 bound parameters per
 * statement), RETURNING from INSERT … SELECT, and guards. So such batches go to D1 directly; every statement of a
 * batch commits, or none does.
 */

interface SqlOf {
	sql: string;
	params: unknown[];
}

/** A drizzle query builder (`toSQL`) or a drizzle raw statement (`getQuery`), e.g. `ensureInstancesStatement`. */
export type DrizzleStatement = { toSQL(): SqlOf } | { getQuery(): SqlOf };

export function fromDrizzle(d1: D1Database, query: DrizzleStatement): D1PreparedStatement {
	const { sql, params } = "toSQL" in query ? query.toSQL() : query.getQuery();
	return d1.prepare(sql).bind(...params);
}

export function statement(d1: D1Database, sql: string, ...params: unknown[]): D1PreparedStatement {
	return d1.prepare(sql).bind(...params);
}

/**
 * Aborts the whole batch unless the statement just before it changed at least one row: the batch equivalent of
 * "UPDATE … WHERE version = ?; if nothing changed, roll back". `json()` of text that is not JSON raises an error,
 * and CASE evaluates it only when the condition holds.
 */
export function abortUnlessChanged(d1: D1Database): D1PreparedStatement {
	return d1.prepare("SELECT CASE WHEN changes() = 0 THEN json('stale-write-guard') END");
}

export function isAbortedByGuard(error: unknown): boolean {
	return /malformed JSON/i.test(String((error as { cause?: unknown })?.cause ?? "") + String(error));
}

/** The rows a RETURNING statement of a batch gave back. */
export function returned<T>(result: D1Result | undefined): T[] {
	return (result?.results ?? []) as T[];
}

/** A JSON array parameter of rows, kept under this many bytes (D1 statements stay far below 100 KB). */
export const JSON_PARAMETER_BYTES = 90 * 1024;

/**
 * Splits rows (already JSON text) into groups whose JSON array stays under `maxBytes`; one row at least each.
 * `lengthOf` tells a row's length when rows are not strings themselves.
 */
export function chunkJsonRows<T = string>(
	rows: readonly T[],
	maxBytes = JSON_PARAMETER_BYTES,
	lengthOf: (row: T) => number = (row) => (row as string).length,
): T[][] {
	const groups: T[][] = [];
	let group: T[] = [];
	let bytes = 0;
	for (const row of rows) {
		const length = lengthOf(row);
		if (group.length > 0 && bytes + length + 1 > maxBytes) {
			groups.push(group);
			group = [];
			bytes = 0;
		}
		group.push(row);
		bytes += length + 1;
	}
	if (group.length > 0) groups.push(group);
	return groups;
}
