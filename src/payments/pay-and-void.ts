/**
 * Paying and voiding (docs/billing.md#invoices, docs/billing.md#prepaid-credits, docs/billing.md#invoice-documents-and-payments). Only an open invoice can change state, and the change is a
 * conditional UPDATE … WHERE status = 'open', so two concurrent payments can never both succeed. A payment pays
 * what credits left due; a void gives the credits it used back to their grants, in the same batch.
 */
import { and, eq, sql } from "drizzle-orm";
import { auditInsert, auditRecordInsert } from "../audit/record";
import { settleGrants } from "../credits/ledger";
import { abortUnlessChanged, fromDrizzle, isAbortedByGuard } from "../db/batch";
import type { ById } from "../db/rows";
import { creditLedger, invoices, payments } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { markStatements, type WriteMark } from "../db/write-once";
import {
	getInvoice,
	getInvoiceRow,
	type InvoiceRow,
	type InvoiceView,
	invoiceEventData,
} from "../invoicing/invoices";
import { Decimal } from "../lib/decimal";
import { conflict } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { outboxInsert } from "../webhooks/outbox";

/** The invoice, only while it is open and credit notes took what they had when it was read. */
function stillOpen(scope: Scope, id: string, creditedMinor: number) {
	return inScope(
		scope,
		invoices,
		eq(invoices.id, id),
		eq(invoices.status, "open"),
		eq(invoices.creditedMinor, creditedMinor),
	);
}

function notOpen(row: InvoiceRow, verb: "pay" | "void"): Error {
	return conflict(
		`Invoice ${row.id} is ${row.status}; only an open invoice can be ${verb === "pay" ? "paid" : "voided"}.`,
	);
}

/**
 * Voiding a draft discards it: it stays readable, void and never numbered; it was never announced, so no
 * webhook, and it applied no credits. The period's next generation invoices its usage again.
 */
async function discardDraft({ db, scope, id, mark }: ById & { mark?: WriteMark }): Promise<InvoiceView> {
	const d1 = db.$client;
	const discard = db
		.update(invoices)
		.set({ status: "void", voidedAt: nowIso() })
		.where(inScope(scope, invoices, eq(invoices.id, id), eq(invoices.status, "draft")));
	try {
		await d1.batch([fromDrizzle(d1, discard), abortUnlessChanged(d1), ...markStatements(mark, d1, [id])]);
	} catch (error) {
		if (!isAbortedByGuard(error)) throw error;
		// Finalized meanwhile: void it as an issued invoice.
		return voidInvoice({ db, scope, id, mark });
	}
	return getInvoice({ db, scope, id });
}

/** An invoice with credit notes stays: what it billed is corrected by them, not erased (docs/credit-notes.md). */
function credited(row: InvoiceRow): Error {
	return conflict(
		`Invoice ${row.id} has credit notes and cannot be voided; credit what is left of it instead.`,
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
	mark,
}: ById & {
	reference?: string;
	mark?: WriteMark;
}): Promise<InvoiceView> {
	const row = await getInvoiceRow({ db, scope, id });
	if (row.status !== "open") throw notOpen(row, "pay");

	const paidAt = nowIso();
	const paymentId = newId("pay");
	const paid: InvoiceRow = { ...row, status: "paid", paidAt };
	// What credit notes took off the amount due (docs/credit-notes.md) is not paid; a credit note issued since the
	// read changes credited_minor, and the UPDATE below then changes nothing and the batch rolls back.
	const due = Decimal.from(row.amount)
		.sub(Decimal.from(row.creditsApplied))
		.sub(Decimal.from(row.creditedToInvoice));
	const amount = due.toNumber();
	const d1 = db.$client;
	try {
		await d1.batch([
			...[
				db
					.update(invoices)
					.set({ status: "paid", paidAt })
					.where(stillOpen(scope, id, row.creditedMinor)),
				db.insert(payments).values({
					id: paymentId,
					environment: scope.environment,
					invoiceId: id,
					accountId: row.accountId,
					amount: sql`(SELECT ${due.toString()} FROM ${invoices} WHERE ${and(
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
					kind: "payment",
					paid_at: paidAt,
				}),
				auditRecordInsert(db, scope, {
					action: "invoice.paid",
					resourceId: id,
					changes: {
						status: ["open", "paid"],
						paid_at: [null, paidAt],
						payment_id: [null, paymentId],
						...(reference === undefined ? {} : { reference: [null, reference] }),
					},
				}),
			].map((query) => fromDrizzle(d1, query)),
			...markStatements(mark, d1, [paymentId]),
		]);
	} catch (error) {
		const now = await getInvoiceRow({ db, scope, id });
		if (now.status !== "open") throw notOpen(now, "pay");
		if (now.creditedMinor !== row.creditedMinor) {
			throw conflict(`A credit note changed what is due on invoice ${id} meanwhile; pay again.`);
		}
		throw error;
	}
	return getInvoice({ db, scope, id });
}

/**
 * Voiding a void invoice answers it again unchanged; voiding a paid one is a conflict. The void, the reversal of
 * its credit applications, the re-expiry of grants that expired meanwhile, and invoice.voided are one batch,
 * which a guard rolls back when the conditional UPDATE changed nothing.
 */
export async function voidInvoice({
	db,
	scope,
	id,
	mark,
}: ById & { mark?: WriteMark }): Promise<InvoiceView> {
	const row = await getInvoiceRow({ db, scope, id });
	if (row.status === "paid") throw notOpen(row, "void");
	if (row.status === "void") return getInvoice({ db, scope, id });
	if (row.creditedMinor > 0) throw credited(row);
	if (row.status === "draft") return discardDraft({ db, scope, id, mark });

	const d1 = db.$client;
	const voidedAt = nowIso();
	const voided: InvoiceRow = { ...row, status: "void", voidedAt };
	const giveCreditsBack = db.insert(creditLedger).select(sql`
		SELECT 'cle_' || lower(hex(randomblob(13))), environment, grant_id, account_id, 'reversal', -amount_minor,
			invoice_id, ${voidedAt}
		FROM ${creditLedger}
		WHERE environment = ${scope.environment} AND invoice_id = ${id} AND kind = 'application'`);
	try {
		await d1.batch([
			fromDrizzle(
				d1,
				db
					.update(invoices)
					.set({ status: "void", voidedAt })
					.where(stillOpen(scope, id, 0)),
			),
			abortUnlessChanged(d1),
			fromDrizzle(d1, giveCreditsBack),
			// Credits given back to a grant that has expired or was voided meanwhile stay out of reach.
			settleGrants(d1, scope.environment, [row.accountId], voidedAt),
			fromDrizzle(
				d1,
				outboxInsert(db, scope, "invoice.voided", { ...invoiceEventData(voided), voided_at: voidedAt }),
			),
			auditInsert(d1, scope, {
				action: "invoice.voided",
				resourceId: id,
				changes: { status: ["open", "void"], voided_at: [null, voidedAt] },
			}),
			...markStatements(mark, d1, [id]),
		]);
	} catch (error) {
		if (!isAbortedByGuard(error)) throw error;
		const now = await getInvoiceRow({ db, scope, id });
		if (now.status === "paid") throw notOpen(now, "void");
		if (now.creditedMinor > 0) throw credited(now);
	}
	return getInvoice({ db, scope, id });
}
