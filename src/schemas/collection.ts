import { z } from "@hono/zod-openapi";

/**
 * An invoice's `collection` (docs/payments.md#collection): how it is being paid and how far that went. One shape
 * for the invoice view (invoicing/collection-view.ts builds it) and the invoice.* webhooks that carry it.
 */
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
