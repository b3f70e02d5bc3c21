import { desc, eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";
import { inScope, type Scope } from "./scope";

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

type InvoiceRecordTable = ListableTable & {
	environment: SQLiteColumn;
	accountId: SQLiteColumn;
	invoiceId: SQLiteColumn;
};

/** A page of what is recorded against invoices (payments, credit notes), of one account or invoice if given. */
export function newestOfAccountOrInvoice<T extends InvoiceRecordTable>(
	db: Db,
	scope: Scope,
	table: T,
	filters: { account_id?: string; invoice_id?: string },
	page: { limit: number; offset: number },
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
	const where = inScope(
		scope,
		table,
		filters.account_id === undefined ? undefined : eq(table.accountId, filters.account_id),
		filters.invoice_id === undefined ? undefined : eq(table.invoiceId, filters.invoice_id),
	);
	return newestFirst(db, table, where, page);
}
