import { createRoute } from "@hono/zod-openapi";
import type { WriteMark } from "../db/write-once";
import { missingRate } from "../exchange-rates/convert";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { pageOf, pageSchema } from "../schemas/pages";
import { generateInvoicesForPeriod } from "./generate";
import { getInvoice, getInvoices, listInvoices } from "./invoices";
import { GeneratedInvoices, GenerateInvoices, Invoice, InvoiceParams, ListInvoicesQuery } from "./schemas";

export const invoiceRoutes = apiRouter();

invoiceRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/generate",
		operationId: "generateInvoices",
		tags: ["Invoices"],
		summary: "Generate the invoices of a billing period",
		description:
			"For every subscription active at some time in the period: a regular invoice if the period has none yet, " +
			"else a supplementary invoice for usage that arrived since, when there is any. Safe to repeat: nothing is " +
			"billed twice. 201 with the invoices created, or 200 with an empty list when nothing was new. 409, with " +
			"nothing stored, when an invoice's amount or a line's amount has more significant digits than a JSON " +
			"number carries exactly (up to 15 are always exact: 9,999,999,999,999.99 in a currency of 2 decimals).",
		request: { body: { required: true, ...json(GenerateInvoices) } },
		responses: {
			201: { description: "The invoices created by this call", ...json(GeneratedInvoices) },
			200: { description: "Nothing new to invoice", ...json(GeneratedInvoices) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const input = c.req.valid("json");
		const refused: { from: string; to: string }[] = [];
		const generate = (mark: WriteMark | undefined) =>
			generateInvoicesForPeriod({
				env: c.env,
				scope: c.get("scope"),
				billingPeriod: input.billing_period,
				accountId: input.account_id,
				mark,
				refused,
			});
		// A repeat after a crash answers the invoices the first call stored, and finishes what it had not reached.
		const created = await writeOnce(c, generate, async (ids, mark) => [
			...(await getInvoices({ ...scopeOf(c), ids })),
			...(await generate(mark)),
		]);
		// The other invoices are issued; those without an exchange rate wait for the cron (docs/currencies.md).
		if (refused.length > 0) throw missingRate(refused);
		if (created.length === 0) return c.json({ invoices: [] }, 200);
		return c.json({ invoices: created }, 201);
	},
);

invoiceRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/invoices",
		operationId: "listInvoices",
		tags: ["Invoices"],
		summary: "List invoices",
		request: { query: ListInvoicesQuery },
		responses: {
			200: { description: "Invoices, newest first", ...json(pageSchema("invoices", Invoice)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const { limit, offset, ...filters } = c.req.valid("query");
		const { items, total } = await listInvoices({
			...scopeOf(c),
			filters,
			limit,
			offset,
		});
		return c.json(pageOf("invoices", items, total, { limit, offset }), 200);
	},
);

invoiceRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/invoices/{invoice_id}",
		operationId: "getInvoice",
		tags: ["Invoices"],
		summary: "Get an invoice",
		request: { params: InvoiceParams },
		responses: { 200: { description: "The invoice", ...json(Invoice) }, ...errorResponses(404) },
	}),
	async (c) =>
		c.json(
			await getInvoice({
				...scopeOf(c),
				id: c.req.valid("param").invoice_id,
			}),
			200,
		),
);
