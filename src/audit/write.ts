/**
 * The one way a change and its audit record are written: the verb builds its statements as it would for any
 * atomic batch, names the change, and `writeAudited` appends the record and runs the batch. For a single-row
 * update, `updateAudited` also reads the row first, so the record says what each field was and became.
 */
import { eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";
import { abortUnlessChanged, type DrizzleStatement, fromDrizzle, isAbortedByGuard } from "../db/batch";
import type { Db } from "../db/client";
import { getInScope } from "../db/rows";
import { inScope, type Scope } from "../db/scope";
import { notFound } from "../lib/errors";
import { type AuditedChange, auditInsert, auditInserts, changedColumns } from "./record";

type Statement = D1PreparedStatement | DrizzleStatement;

function prepared(d1: D1Database, statement: Statement): D1PreparedStatement {
	return "bind" in statement ? statement : fromDrizzle(d1, statement);
}

/**
 * Runs `statements` and the audit record of each change in one batch; answers the results of `statements` (the
 * records' own results dropped). `d1` is the binding, or a drizzle database over it.
 */
export async function writeAudited(
	database: D1Database | Db,
	scope: Scope,
	statements: readonly Statement[],
	changes: AuditedChange | readonly AuditedChange[],
): Promise<D1Result[]> {
	const d1 = "$client" in database ? database.$client : database;
	const records = (Array.isArray(changes) ? changes : [changes]) as AuditedChange[];
	const results = await d1.batch([
		...statements.map((s) => prepared(d1, s)),
		...auditInserts(d1, scope, records),
	]);
	return results.slice(0, statements.length);
}

// biome-ignore lint/suspicious/noExplicitAny: any table with environment and id columns
type ScopedTable = SQLiteTableWithColumns<any> & { environment: SQLiteColumn; id: SQLiteColumn };

/**
 * `updateInScope` with its audit record: sets `set` on the row with this id in the scope (and meeting
 * `conditions`), records `[before, after]` of each field that changed under `action`, and answers the row after.
 * not_found when no row matches, then or by the time the batch runs (nothing is written then). When `set` changes
 * no field (besides `updated_at`), nothing is written at all: a write that changes nothing leaves no record.
 */
export async function updateAudited<T extends ScopedTable>(
	db: Db,
	scope: Scope,
	table: T,
	what: string,
	id: string,
	set: Partial<T["$inferInsert"]>,
	action: string,
	...conditions: SQL[]
): Promise<T["$inferSelect"]> {
	const before = await getInScope(db, scope, table, what, id, ...conditions);
	const changes = changedColumns(table, before, set as Record<string, unknown>);
	if (Object.keys(changes).length === 0) return before;
	const d1 = db.$client;
	try {
		await d1.batch([
			fromDrizzle(
				d1,
				db
					.update(table as ScopedTable)
					.set(set)
					.where(inScope(scope, table, eq(table.id, id), ...conditions)),
			),
			abortUnlessChanged(d1),
			auditInsert(d1, scope, {
				action,
				resourceId: id,
				changes,
			}),
		]);
		// The guard proved the row matched, so it now holds what it held with `set` applied.
		return { ...before, ...set } as T["$inferSelect"];
	} catch (error) {
		if (isAbortedByGuard(error)) throw notFound(what, id);
		throw error;
	}
}
