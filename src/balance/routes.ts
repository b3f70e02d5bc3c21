/** GET /v1/accounts/{account_id}/balance: an account's credit against what its usage accrued (docs/billing.md). */
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { currencyCode } from "../schemas/currency";
import { accountBalance } from "./balance";

const Balance = z
	.object({
		account_id: z.string(),
		currency: z.string(),
		available: z.number().openapi({ description: "The remaining of the account's active grants." }),
		pending_usage: z.number().openapi({
			description:
				"What the account's subscriptions accrued in the current period so far and no invoice billed yet " +
				"(0 right after the period is invoiced; later usage adds what a supplementary invoice would bill).",
		}),
		projected: z.number().openapi({ description: "available − pending_usage." }),
	})
	.openapi("CreditBalance");

const AccountParams = z.object({ account_id: z.string() });
const BalanceQuery = z.strictObject({
	currency: currencyCode().optional().openapi({
		example: "EUR",
		description:
			"The currency to read (default the account's): grants in it, and usage of subscriptions billed in it.",
	}),
});

export const balanceRoutes = apiRouter();

balanceRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/accounts/{account_id}/balance",
		operationId: "getCreditBalance",
		tags: ["Credits"],
		summary: "An account's credit balance and what its usage has accrued this period",
		request: { params: AccountParams, query: BalanceQuery },
		responses: { 200: { description: "The balance", ...json(Balance) }, ...errorResponses(400, 404, 409) },
	}),
	async (c) =>
		c.json(
			await accountBalance({
				env: c.env,
				scope: c.get("scope"),
				accountId: c.req.valid("param").account_id,
				currency: c.req.valid("query").currency,
			}),
			200,
		),
);
