import { eq, ne, type SQL } from "drizzle-orm";
import type { SelectedFields } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";
import { invoiceLines, invoices } from "../db/schema";
import { inScope, type Scope } from "../db/scope";

/**
 * The billed lines of a scope: lines of invoices that are not void and meet `conditions`, each with its metric,
 * amount and agent shares and the invoice or line columns in `fields`. Invoicing reads them to bill only what is
 * not billed yet; revenue reports read them as the revenue.
 */
export function billedLines<F extends SelectedFields>(db: Db, scope: Scope, fields: F, ...conditions: SQL[]) {
	return db
		.select({
			...fields,
			metric: invoiceLines.metric,
			amount: invoiceLines.amount,
			agentShares: invoiceLines.agentShares,
		})
		.from(invoiceLines)
		.innerJoin(invoices, eq(invoices.id, invoiceLines.invoiceId))
		.where(inScope(scope, invoices, ne(invoices.status, "void"), ...conditions));
}
