import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { listPayments } from "./payments";
import { Payment } from "./schemas";

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
