/**
 * A payment Stripe declined (payment_intent.payment_failed; docs/payments.md#dunning). For a collection by
 * PaymentIntent it counts an attempt and either schedules the next retry or, with none left, fails the
 * collection: payment.failed each time, invoice.payment_failed after the last. A Checkout Session's customer retries
 * on Stripe's page, so there it only keeps Stripe's message.
 */
import { eq } from "drizzle-orm";
import { auditInsert } from "../../audit/record";
import { fromMinor } from "../../credits/wallet";
import { abortUnlessChanged, fromDrizzle, isAbortedByGuard } from "../../db/batch";
import type { Db } from "../../db/client";
import { invoiceCollections } from "../../db/schema";
import { inScope, type Scope } from "../../db/scope";
import { invoiceEventData } from "../../invoicing/invoices";
import { nowIso } from "../../lib/time";
import { outboxInsert } from "../../webhooks/outbox";
import { nextAttemptAt } from "../dunning";
import { collectionUpdate, eventApplied, invoiceRow, type StripeEventRef } from "./payment-events";

export async function applyFailedPayment(
	db: Db,
	scope: Scope,
	event: StripeEventRef,
	failure: { invoiceId: string; paymentIntentId: string; amountMinor: bigint | null; error: string },
	retryDays: readonly number[],
	retried = false,
): Promise<void> {
	const row = await invoiceRow(db, scope, failure.invoiceId);
	if (row === null) return;
	const d1 = db.$client;
	const guard = inScope(
		scope,
		invoiceCollections,
		eq(invoiceCollections.id, row.id),
		eq(invoiceCollections.collectionAttempts, row.collectionAttempts),
		eq(invoiceCollections.status, row.status),
	);
	const byIntent =
		row.collectionCheckoutSessionId === null && row.collectionStatus === "pending" && row.status === "open";
	if (!byIntent) {
		// A Checkout customer tries again on Stripe's page; a collection no longer pending changes no more.
		const statements = [fromDrizzle(d1, eventApplied(db, scope, event))];
		if (row.collectionStatus === "pending") {
			statements.unshift(collectionUpdate(db, { collectionLastError: failure.error }, guard));
		}
		await d1.batch(statements);
		return;
	}
	const attempts = row.collectionAttempts + 1;
	const firstFailedAt = row.collectionFirstFailedAt ?? nowIso();
	const next = nextAttemptAt(firstFailedAt, attempts, retryDays);
	const failed = next === null;
	const amount = fromMinor(failure.amountMinor ?? 0n, row.currency).toNumber();
	try {
		await d1.batch([
			collectionUpdate(
				db,
				{
					collectionAttempts: attempts,
					collectionFirstFailedAt: firstFailedAt,
					collectionNextAttemptAt: next,
					collectionLastError: failure.error,
					collectionStatus: failed ? "failed" : "pending",
					collectionPaymentIntentId: failure.paymentIntentId,
				},
				guard,
			),
			abortUnlessChanged(d1),
			fromDrizzle(
				d1,
				outboxInsert(db, scope, "payment.failed", {
					invoice_id: row.id,
					account_id: row.accountId,
					amount,
					currency: row.currency,
					attempt: attempts,
					next_attempt_at: next,
					error: failure.error,
				}),
			),
			...(failed
				? [
						fromDrizzle(
							d1,
							outboxInsert(db, scope, "invoice.payment_failed", { ...invoiceEventData(row), attempts }),
						),
					]
				: []),
			auditInsert(d1, scope, {
				action: "invoice.payment_failed",
				resourceId: row.id,
				changes: {
					collection_attempts: [row.collectionAttempts, attempts],
					collection_status: [row.collectionStatus, failed ? "failed" : "pending"],
					collection_next_attempt_at: [row.collectionNextAttemptAt, next],
					payment_intent_id: [row.collectionPaymentIntentId, failure.paymentIntentId],
				},
			}),
			fromDrizzle(d1, eventApplied(db, scope, event)),
		]);
	} catch (error) {
		if (!isAbortedByGuard(error) || retried) throw error;
		await applyFailedPayment(db, scope, event, failure, retryDays, true);
	}
}
