import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { getInvoice } from "../invoicing/invoices";
import { Invoice, InvoiceParams, PayInvoice } from "../invoicing/schemas";
import { tellThresholdVoided } from "../invoicing/threshold-void";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { payInvoice, voidInvoice } from "./pay-and-void";
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

paymentRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/{invoice_id}/pay",
		operationId: "payInvoice",
		tags: ["Invoices"],
		summary: "Record the payment of an invoice",
		description:
			"Only an open invoice can be paid; a paid or void one answers 409. Emits invoice.paid, then payment.successful.",
		request: { params: InvoiceParams, body: { required: false, ...json(PayInvoice) } },
		responses: {
			200: { description: "The paid invoice", ...json(Invoice) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").invoice_id;
		const reference = (c.req.valid("json") as z.infer<typeof PayInvoice> | undefined)?.reference;
		const invoice = await writeOnce(
			c,
			(mark) => payInvoice({ ...scopeOf(c), id, reference, mark }),
			() => getInvoice({ ...scopeOf(c), id }),
		);
		return c.json(invoice, 200);
	},
);

paymentRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/{invoice_id}/void",
		operationId: "voidInvoice",
		tags: ["Invoices"],
		summary: "Void an invoice",
		description:
			"An open invoice becomes void and no longer counts as billed: the next generation for its period bills " +
			"that usage again. A paid invoice cannot be voided (409); a void one is answered unchanged.",
		request: { params: InvoiceParams },
		responses: { 200: { description: "The void invoice", ...json(Invoice) }, ...errorResponses(404, 409) },
	}),
	async (c) => {
		const id = c.req.valid("param").invoice_id;
		const invoice = await writeOnce(
			c,
			(mark) => voidInvoice({ ...scopeOf(c), id, mark }),
			() => getInvoice({ ...scopeOf(c), id }),
		);
		const { db, scope } = scopeOf(c);
		await tellThresholdVoided(c.env, db, scope, invoice);
		return c.json(invoice, 200);
	},
);
