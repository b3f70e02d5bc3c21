/**
 * What every domain verb shares. A row by id in the caller's environment, or not_found: the one way a verb reads
 * or changes a single row it was asked for by id (`what` names the resource in the error: "No account with id
 * 'acc_…'."). And the shapes of a verb's parameters: InScope, ById, Page, Listing, WithEnv.
 */
import { eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import { notFound } from "../lib/errors";
import type { Db } from "./client";
import { inScope, type Scope } from "./scope";

// biome-ignore lint/suspicious/noExplicitAny: any table with environment and id columns
type ScopedTable = SQLiteTableWithColumns<any> & { environment: SQLiteColumn; id: SQLiteColumn };

/** The row with this id in the scope (and meeting `conditions`), or a not_found error. */
export async function getInScope<T extends ScopedTable>(
	db: Db,
	scope: Scope,
	table: T,
	what: string,
	id: string,
	...conditions: SQL[]
): Promise<T["$inferSelect"]> {
	const [row] = await db
		.select()
		.from(table as ScopedTable)
		.where(inScope(scope, table, eq(table.id, id), ...conditions));
	if (!row) throw notFound(what, id);
	return row as T["$inferSelect"];
}

/** Sets `changes` on the row with this id in the scope (and meeting `conditions`) and answers it, or not_found. */
export async function updateInScope<T extends ScopedTable>(
	db: Db,
	scope: Scope,
	table: T,
	what: string,
	id: string,
	changes: Partial<T["$inferInsert"]>,
	...conditions: SQL[]
): Promise<T["$inferSelect"]> {
	const [row] = await db
		.update(table as ScopedTable)
		.set(changes)
		.where(inScope(scope, table, eq(table.id, id), ...conditions))
		.returning();
	if (!row) throw notFound(what, id);
	return row as T["$inferSelect"];
}

/** What every domain verb runs with: the database and the caller's environment. */
export interface InScope {
	db: Db;
	scope: Scope;
}

/** A domain verb about one resource, named by id. */
export interface ById extends InScope {
	id: string;
}

/** A page of a list: how many rows, after how many. */
export interface Page {
	limit: number;
	offset: number;
}

/** A domain verb that lists: a page of rows that match `filters`. */
export type Listing<Filters> = InScope & Page & { filters: Filters };

/** A domain verb that also reaches the Worker's bindings (accumulators, queues, R2). */
export interface WithEnv extends InScope {
	env: Env;
}
