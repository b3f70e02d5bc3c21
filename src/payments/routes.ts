import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { PaymentKind } from "../schemas/payments";
import { listPayments } from "./payments";

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

const ListPaymentsQuery = z.strictObject({
	...pageQuery,
	account_id: z.string().min(1).optional(),
	invoice_id: z.string().min(1).optional(),
});

export const paymentRoutes = apiRouter();

paymentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/payments",
		operationId: "listPayments",
		tags: ["Invoices"],
		summary: "List payments",
		request: { query: ListPaymentsQuery },
		responses: {
			200: { description: "Payments, newest first", ...json(pageSchema("payments", Payment)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const { limit, offset, ...filters } = c.req.valid("query");
		const { items, total } = await listPayments({
			...scopeOf(c),
			filters,
			limit,
			offset,
		});
		return c.json(pageOf("payments", items, total, { limit, offset }), 200);
	},
);
