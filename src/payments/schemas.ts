/** A payment as the API shows it: GET /v1/payments, the portal's payments page. */
import { z } from "@hono/zod-openapi";
import { PaymentKind } from "../schemas/payments";

export const Payment = z
	.object({
		id: z.string().openapi({ example: "pay_01jd0000000000000000000000" }),
		invoice_id: z.string(),
		account_id: z.string().nullable(),
		amount: z.number().openapi({
			description: "What was paid: the invoice's amount_due; negative for a refund made by a credit note.",
		}),
		currency: z.string().openapi({ example: "USD" }),
		kind: PaymentKind,
		reference: z.string().nullable().openapi({ example: "wire-2026-001" }),
		provider: z.enum(["manual", "stripe"]).openapi({
			description: "stripe: collected (or refunded) through Stripe, its reference Stripe's id.",
		}),
		paid_at: z.string(),
	})
	.openapi("Payment");
