import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { decimalPlaces } from "../lib/money";
import { boundedNumber } from "../schemas/numbers";
import { finalizeInvoice } from "./finalize";
import { getInvoice } from "./invoices";
import { addOneOffLine } from "./one-off-lines";
import { Invoice, InvoiceParams } from "./schemas";

// Draft invoices (docs/credit-notes.md#draft-invoices): one-off lines and finalizing by hand.
export const draftInvoiceRoutes = apiRouter();

const AddInvoiceLine = z
	.strictObject({
		description: z.string().trim().min(1).max(500).openapi({ example: "Onboarding workshop" }),
		amount: boundedNumber()
			.refine((x) => x !== 0, "must not be 0")
			.refine((x) => decimalPlaces(x) <= 12, "must have at most 12 decimal places")
			.openapi({ example: 450, description: "Negative for a deduction; the invoice may not go below 0." }),
	})
	.openapi("AddInvoiceLine");

draftInvoiceRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/{invoice_id}/lines",
		operationId: "addInvoiceLine",
		tags: ["Invoices"],
		summary: "Add a one-off line to a draft invoice",
		description:
			'The line (metric "one-off", quantity 1) is billed once: updates of the draft by late usage keep it, and ' +
			"supplementary invoices neither repeat nor reverse it. 409 unless the invoice is a draft, or when the " +
			"line would take it below 0.",
		request: { params: InvoiceParams, body: { required: true, ...json(AddInvoiceLine) } },
		responses: {
			201: { description: "The draft with its new line", ...json(Invoice) },
			...errorResponses(...bodyErrors, 404, 409),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").invoice_id;
		const invoice = await writeOnce(
			c,
			(mark) => addOneOffLine({ ...scopeOf(c), id, line: c.req.valid("json"), mark }),
			() => getInvoice({ ...scopeOf(c), id }),
		);
		return c.json(invoice, 201);
	},
);

draftInvoiceRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/{invoice_id}/finalize",
		operationId: "finalizeInvoice",
		tags: ["Invoices"],
		summary: "Finalize a draft invoice now",
		description:
			"Brings the draft up to date with the period's usage, then issues it: number, issued_at, due_at, prepaid " +
			"credits applied, and invoice.created with the status after credits. 409 unless it is a draft.",
		request: { params: InvoiceParams },
		responses: {
			200: { description: "The invoice as issued", ...json(Invoice) },
			...errorResponses(404, 409),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").invoice_id;
		const invoice = await writeOnce(
			c,
			(mark) => finalizeInvoice({ env: c.env, scope: c.get("scope"), id, mark }),
			() => getInvoice({ ...scopeOf(c), id }),
		);
		return c.json(invoice, 200);
	},
);
