/**
 * An invoice's `collection` (docs/payments.md#collection-states): how it is being paid and how far that went.
 * Manual accounts' invoices show provider "manual", status "none"; the rest is filled in by payments/.
 */
import { z } from "@hono/zod-openapi";
import { invoiceCollections } from "../db/schema";

export interface CollectionView {
	provider: "manual" | "stripe";
	status: "none" | "pending" | "succeeded" | "failed" | "canceled";
	attempts: number;
	next_attempt_at: string | null;
	payment_intent_id: string | null;
	checkout_session_id: string | null;
	payment_url: string | null;
	last_error: string | null;
}

/** The collection columns, to add to a `select` of invoices (the invoice's own columns keep their names). */
export const collectionColumns = {
	collectionProvider: invoiceCollections.collectionProvider,
	collectionStatus: invoiceCollections.collectionStatus,
	collectionAttempts: invoiceCollections.collectionAttempts,
	collectionNextAttemptAt: invoiceCollections.collectionNextAttemptAt,
	collectionPaymentIntentId: invoiceCollections.collectionPaymentIntentId,
	collectionCheckoutSessionId: invoiceCollections.collectionCheckoutSessionId,
	collectionPaymentUrl: invoiceCollections.collectionPaymentUrl,
	collectionLastError: invoiceCollections.collectionLastError,
};

export type CollectionRow = {
	[K in keyof typeof collectionColumns]: (typeof invoiceCollections.$inferSelect)[K];
};

/** A row read without the collection columns counts as collected by hand. */
export function collectionView(row: Partial<CollectionRow>): CollectionView {
	return {
		provider: row.collectionProvider ?? "manual",
		status: row.collectionStatus ?? "none",
		attempts: row.collectionAttempts ?? 0,
		next_attempt_at: row.collectionNextAttemptAt ?? null,
		payment_intent_id: row.collectionPaymentIntentId ?? null,
		checkout_session_id: row.collectionCheckoutSessionId ?? null,
		payment_url: row.collectionPaymentUrl ?? null,
		last_error: row.collectionLastError ?? null,
	};
}

export const Collection = z
	.object({
		provider: z.enum(["manual", "stripe"]),
		status: z.enum(["none", "pending", "succeeded", "failed", "canceled"]).openapi({
			description:
				"none: paid by hand; pending: Stripe is asked (or retried) and has not confirmed; succeeded; failed: " +
				"every retry failed; canceled: paid by hand or voided while Stripe was asked.",
		}),
		attempts: z.number().int().openapi({ description: "Failed attempts so far (Stripe's events)." }),
		next_attempt_at: z.string().nullable().openapi({ description: "When the next dunning retry runs." }),
		payment_intent_id: z.string().nullable().openapi({ example: "pi_3Qx0000000000000" }),
		checkout_session_id: z.string().nullable().openapi({ example: "cs_test_a1b2c3" }),
		payment_url: z
			.string()
			.nullable()
			.openapi({ description: "Stripe Checkout's page where the customer pays this invoice." }),
		last_error: z.string().nullable().openapi({ description: "Stripe's last refusal or decline message." }),
	})
	.openapi("InvoiceCollection");
