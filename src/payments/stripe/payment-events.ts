/**
 * What Stripe's payment events do to an invoice (docs/payments.md#stripes-webhooks). Each change, its webhook
 * events, its audit record and the Stripe event's id are one D1 batch, so an event is applied once and entirely;
 * a guard on the invoice's state rolls the batch back if something changed it meanwhile, and then the event is
 * judged again against what is now stored.
 */
import { and, eq, getTableColumns, type SQL } from "drizzle-orm";
import { auditInsert } from "../../audit/record";
import { fromMinor } from "../../credits/wallet";
import { abortUnlessChanged, fromDrizzle, isAbortedByGuard } from "../../db/batch";
import type { Db } from "../../db/client";
import { invoiceCollections, invoices, payments, stripeEvents } from "../../db/schema";
import { inScope, type Scope } from "../../db/scope";
import { type InvoiceRow, invoiceEventData } from "../../invoicing/invoices";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { outboxInsert } from "../../webhooks/outbox";
import { paymentInsert } from "../payments";

export interface StripeEventRef {
	id: string;
	type: string;
}

type Row = InvoiceRow & typeof invoiceCollections.$inferSelect;

export async function invoiceRow(db: Db, scope: Scope, id: string): Promise<Row | null> {
	const [row] = await db
		.select({ ...getTableColumns(invoices), ...getTableColumns(invoiceCollections) })
		.from(invoices)
		.where(inScope(scope, invoices, eq(invoices.id, id)));
	return row ?? null;
}

/** The batch statement that sets `values` on the invoice's collection where `where` still holds. */
export function collectionUpdate(
	db: Db,
	values: Partial<typeof invoiceCollections.$inferInsert>,
	where: SQL,
): D1PreparedStatement {
	return fromDrizzle(db.$client, db.update(invoiceCollections).set(values).where(where));
}

export function eventApplied(db: Db, scope: Scope, event: StripeEventRef) {
	return db
		.insert(stripeEvents)
		.values({ environment: scope.environment, id: event.id, type: event.type, receivedAt: nowIso() });
}

/**
 * A payment Stripe confirmed: recorded and the invoice paid, as a manual payment does (invoice.paid, then
 * payment.successful). Its PaymentIntent already paid this invoice: nothing. The invoice paid otherwise or void:
 * nothing but an audit record naming the PaymentIntent, for the operator to refund.
 */
export async function applySucceededPayment(
	db: Db,
	scope: Scope,
	event: StripeEventRef,
	payment: { invoiceId: string; paymentIntentId: string; amountMinor: bigint },
	retried = false,
): Promise<void> {
	const row = await invoiceRow(db, scope, payment.invoiceId);
	if (row === null) return;
	const d1 = db.$client;
	const [same] = await db
		.select({ id: payments.id })
		.from(payments)
		.where(and(eq(payments.invoiceId, row.id), eq(payments.reference, payment.paymentIntentId)));
	if (same) {
		await fromDrizzle(d1, eventApplied(db, scope, event).onConflictDoNothing()).run();
		return;
	}
	const amount = fromMinor(payment.amountMinor, row.currency);
	if (row.status !== "open") {
		await d1.batch([
			fromDrizzle(d1, eventApplied(db, scope, event)),
			auditInsert(d1, scope, {
				action: "invoice.stripe_payment_unapplied",
				resourceId: row.id,
				changes: {
					payment_intent_id: [null, payment.paymentIntentId],
					amount: [null, amount.toNumber()],
					invoice_status: [row.status, row.status],
				},
			}),
		]);
		return;
	}
	const paidAt = nowIso();
	const paymentId = newId("pay");
	try {
		await d1.batch([
			collectionUpdate(
				db,
				{
					status: "paid",
					paidAt,
					collectionProvider: "stripe",
					collectionStatus: "succeeded",
					collectionDue: null,
					collectionNextAttemptAt: null,
					collectionPaymentIntentId: payment.paymentIntentId,
				},
				inScope(
					scope,
					invoiceCollections,
					eq(invoiceCollections.id, row.id),
					eq(invoiceCollections.status, "open"),
				),
			),
			abortUnlessChanged(d1),
			paymentInsert(d1, {
				id: paymentId,
				environment: scope.environment,
				invoiceId: row.id,
				accountId: row.accountId,
				amount: amount.toString(),
				currency: row.currency,
				reference: payment.paymentIntentId,
				provider: "stripe",
				createdAt: paidAt,
			}),
			fromDrizzle(
				d1,
				outboxInsert(db, scope, "invoice.paid", {
					...invoiceEventData({ ...row, status: "paid" }),
					paid_at: paidAt,
				}),
			),
			fromDrizzle(
				d1,
				outboxInsert(db, scope, "payment.successful", {
					payment_id: paymentId,
					invoice_id: row.id,
					account_id: row.accountId,
					amount: amount.toNumber(),
					currency: row.currency,
					kind: "payment",
					paid_at: paidAt,
				}),
			),
			auditInsert(d1, scope, {
				action: "invoice.paid",
				resourceId: row.id,
				changes: {
					status: ["open", "paid"],
					paid_at: [null, paidAt],
					payment_id: [null, paymentId],
					reference: [null, payment.paymentIntentId],
				},
			}),
			fromDrizzle(d1, eventApplied(db, scope, event)),
		]);
	} catch (error) {
		if (!isAbortedByGuard(error) || retried) throw error;
		await applySucceededPayment(db, scope, event, payment, true);
	}
}
