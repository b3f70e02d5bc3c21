import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { isCurrencyCode } from "../lib/money";
import { billingPeriod } from "./schemas";
import { accountStatement } from "./statement";

const Statement = z
	.object({
		account_id: z.string(),
		billing_period: z.string().openapi({ example: "2026-11" }),
		currency: z.string().openapi({ example: "USD" }),
		invoices: z.array(z.string()).openapi({ description: "The invoices summed, oldest first." }),
		amount: z.number(),
		credits_applied: z.number(),
		amount_due: z.number(),
		amount_paid: z.number(),
		amount_remaining: z.number(),
	})
	.openapi("AccountStatement");

const StatementQuery = z.strictObject({
	billing_period: billingPeriod,
	currency: z
		.string()
		.refine(isCurrencyCode, "Must be an ISO 4217 currency code in upper case.")
		.optional()
		.openapi({ description: "Default: the account's currency. Other currencies' invoices are left out." }),
});

export const statementRoutes = apiRouter();

statementRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/accounts/{account_id}/statement",
		operationId: "getAccountStatement",
		tags: ["Accounts"],
		summary: "What an account pays for a billing period, its children's invoices included",
		description:
			"The sums of every issued, not void invoice of the period whose payer is the account: its own and those " +
			"of its children with billing parent, in one currency.",
		request: { params: z.object({ account_id: z.string() }), query: StatementQuery },
		responses: { 200: { description: "The statement", ...json(Statement) }, ...errorResponses(400, 404) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const statement = await accountStatement({
			...scopeOf(c),
			accountId: c.req.valid("param").account_id,
			billingPeriod: query.billing_period,
			currency: query.currency,
		});
		return c.json(statement, 200);
	},
);
