/**
 * Storing one invoice: one D1 batch (atomic) that takes the next number from the environment's counter, inserts
 * the invoice and its lines, and records invoice.created in the outbox. Concurrency is settled by constraints,
 * not locks: two generators that drafted the same subscription and period use the same sequence, the unique
 * (subscription_id, billing_period, sequence) index fails the loser's whole batch — counter increment included,
 * so numbers stay gapless — and the loser skips that subscription.
 */
import { sql } from "drizzle-orm";
import { type Db, isUniqueViolation } from "../db/client";
import { invoiceCounters, invoiceLines, invoices } from "../db/schema";
import type { Scope } from "../db/scope";
import { newId } from "../lib/ids";
import { outboxInsert } from "../webhooks/outbox";
import type { InvoiceDraft } from "./draft";
import { type InvoiceRow, type InvoiceView, invoiceEventData, invoiceView } from "./invoices";
import type { PeriodWindow } from "./period";

/** The stored invoice, or null when a concurrent generator stored this subscription's invoice first. */
export async function storeInvoice(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	draft: InvoiceDraft,
	now: string,
): Promise<InvoiceView | null> {
	const id = newId("inv");
	const lines = draft.lines.map((line, position) => ({
		position,
		metric: line.metric,
		description: line.description,
		quantity: line.quantity.toString(),
		amount: line.amount.toString(),
		agent_shares: line.agentShares === null ? null : JSON.stringify(line.agentShares),
	}));
	const row: Omit<InvoiceRow, "number"> = {
		id,
		environment: scope.environment,
		accountId: draft.accountId,
		subscriptionId: draft.subscriptionId,
		ratePlanId: draft.ratePlanId,
		billingPeriod: window.period,
		sequence: draft.sequence,
		kind: draft.kind,
		status: "open",
		currency: draft.currency,
		amount: draft.amount.toString(),
		issuedAt: now,
		paidAt: null,
		voidedAt: null,
		createdAt: now,
	};
	const takeNumber = db
		.insert(invoiceCounters)
		.values({ environment: scope.environment, lastNumber: 1 })
		.onConflictDoUpdate({
			target: invoiceCounters.environment,
			set: { lastNumber: sql`${invoiceCounters.lastNumber} + 1` },
		});
	const insertInvoice = db
		.insert(invoices)
		.values({
			...row,
			number: sql`(SELECT ${invoiceCounters.lastNumber} FROM ${invoiceCounters} WHERE ${invoiceCounters.environment} = ${scope.environment})`,
		})
		.returning({ number: invoices.number });
	// One JSON parameter for all lines keeps the statement far below D1's 100 bound parameters. The selected
	// columns follow the table's column order, which an INSERT … SELECT of drizzle requires.
	const insertLines = db.insert(invoiceLines).select(sql`
		SELECT ${id}, json_extract(value, '$.position'), ${scope.environment}, json_extract(value, '$.metric'),
			json_extract(value, '$.description'), json_extract(value, '$.quantity'), json_extract(value, '$.amount'),
			json_extract(value, '$.agent_shares')
		FROM json_each(${JSON.stringify(lines)})`);
	const announce = outboxInsert(db, scope, "invoice.created", invoiceEventData({ ...row, number: 0 }));

	try {
		const [, inserted] = await db.batch([takeNumber, insertInvoice, insertLines, announce]);
		const number = inserted[0]?.number;
		if (number === undefined) throw new Error(`invoice ${id} was stored without a number`);
		return invoiceView({ ...row, number }, lines);
	} catch (error) {
		if (isUniqueViolation(error)) return null;
		throw error;
	}
}
