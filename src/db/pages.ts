import { desc, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

// biome-ignore lint/suspicious/noExplicitAny: any table with created_at and id columns
type ListableTable = SQLiteTableWithColumns<any> & { createdAt: SQLiteColumn; id: SQLiteColumn };

/** One page of a table's rows, newest first (created_at, then id), and the count of all matches: one round trip. */
export async function newestFirst<T extends ListableTable>(
	db: Db,
	table: T,
	where: SQL,
	page: { limit: number; offset: number },
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
	const [rows, [count]] = await db.batch([
		db
			.select()
			.from(table as ListableTable)
			.where(where)
			.orderBy(desc(table.createdAt), desc(table.id))
			.limit(page.limit)
			.offset(page.offset),
		db
			.select({ n: sql<number>`count(*)` })
			.from(table as ListableTable)
			.where(where),
	]);
	return { rows: rows as T["$inferSelect"][], total: count?.n ?? 0 };
}
