/**
 * Paying and voiding (CONTRACT §10). Only an open invoice can change state, and the change is a conditional
 * UPDATE … WHERE status = 'open', so two concurrent payments can never both succeed.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { invoices, payments } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict } from "../http/errors";
import { Decimal } from "../lib/decimal";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { outboxInsert } from "../webhooks/outbox";
import { getInvoice, getInvoiceRow, type InvoiceRow, type InvoiceView, invoiceEventData } from "./invoices";

function notOpen(row: InvoiceRow, verb: "pay" | "void"): Error {
	return conflict(
		`Invoice ${row.id} is ${row.status}; only an open invoice can be ${verb === "pay" ? "paid" : "voided"}.`,
	);
}

/**
 * Marks the invoice paid, records the payment and emits invoice.paid then payment.successful, all in one batch.
 * The payment's amount is read back from the invoice *as just paid by this batch*; if the UPDATE changed nothing
 * (a concurrent pay or void won), that read is NULL, the NOT NULL column refuses it and the batch rolls back.
 */
export async function payInvoice({
	db,
	scope,
	id,
	reference,
}: {
	db: Db;
	scope: Scope;
	id: string;
	reference?: string;
}): Promise<InvoiceView> {
	const row = await getInvoiceRow({ db, scope, id });
	if (row.status !== "open") throw notOpen(row, "pay");

	const paidAt = nowIso();
	const paymentId = newId("pay");
	const paid: InvoiceRow = { ...row, status: "paid", paidAt };
	const amount = Decimal.from(row.amount).toNumber();
	try {
		await db.batch([
			db
				.update(invoices)
				.set({ status: "paid", paidAt })
				.where(inScope(scope, invoices, eq(invoices.id, id), eq(invoices.status, "open"))),
			db.insert(payments).values({
				id: paymentId,
				environment: scope.environment,
				invoiceId: id,
				amount: sql`(SELECT ${invoices.amount} FROM ${invoices} WHERE ${and(
					eq(invoices.id, id),
					eq(invoices.status, "paid"),
					eq(invoices.paidAt, paidAt),
				)})`,
				currency: row.currency,
				reference: reference ?? null,
				createdAt: paidAt,
			}),
			outboxInsert(db, scope, "invoice.paid", { ...invoiceEventData(paid), paid_at: paidAt }),
			outboxInsert(db, scope, "payment.successful", {
				payment_id: paymentId,
				invoice_id: id,
				account_id: row.accountId,
				amount,
				currency: row.currency,
				paid_at: paidAt,
			}),
		]);
	} catch (error) {
		const now = await getInvoiceRow({ db, scope, id });
		if (now.status !== "open") throw notOpen(now, "pay");
		throw error;
	}
	return getInvoice({ db, scope, id });
}

/** Voiding a void invoice answers it again unchanged; voiding a paid one is a conflict. */
export async function voidInvoice({
	db,
	scope,
	id,
}: {
	db: Db;
	scope: Scope;
	id: string;
}): Promise<InvoiceView> {
	const [voided] = await db
		.update(invoices)
		.set({ status: "void", voidedAt: nowIso() })
		.where(inScope(scope, invoices, eq(invoices.id, id), eq(invoices.status, "open")))
		.returning({ id: invoices.id });
	if (!voided) {
		const row = await getInvoiceRow({ db, scope, id });
		if (row.status === "paid") throw notOpen(row, "void");
	}
	return getInvoice({ db, scope, id });
}
