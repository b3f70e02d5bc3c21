import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { Invoice } from "./schemas";
import { upcomingInvoice } from "./upcoming";

const UpcomingInvoice = Invoice.omit({ id: true, number: true })
	.extend({
		id: z.null().openapi({ description: "null: nothing is stored.", example: null }),
		number: z
			.null()
			.openapi({ description: "null: a number is taken only when an invoice is issued.", example: null }),
	})
	.openapi("UpcomingInvoice");

const UpcomingQuery = z.strictObject({ subscription_id: z.string().min(1) });

/** Mounted before the invoice routes, so that /invoices/upcoming is not read as an invoice id. */
export const upcomingInvoiceRoutes = apiRouter();

upcomingInvoiceRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/invoices/upcoming",
		operationId: "getUpcomingInvoice",
		tags: ["Invoices"],
		summary: "The invoice the current period would produce if it closed now",
		description:
			"Rated exactly as generation would rate it (base fee, proration, every charge; a supplementary invoice if " +
			"the period was invoiced already). Nothing is stored. 409 when the subscription is not active in the " +
			"current period.",
		request: { query: UpcomingQuery },
		responses: {
			200: { description: "The upcoming invoice", ...json(UpcomingInvoice) },
			...errorResponses(400, 404, 409),
		},
	}),
	async (c) =>
		c.json(
			await upcomingInvoice({
				env: c.env,
				scope: c.get("scope"),
				subscriptionId: c.req.valid("query").subscription_id,
			}),
			200,
		),
);
