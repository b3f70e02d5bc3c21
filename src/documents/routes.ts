import { createRoute, z } from "@hono/zod-openapi";
import { getCreditNote } from "../credit-notes/credit-notes";
import { CreditNoteParams } from "../credit-notes/schemas";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { getInvoice } from "../invoicing/invoices";
import { creditNotesOf } from "./credit-notes-of";
import { creditNotePdf, invoicePdf } from "./pdf";

export const documentRoutes = apiRouter();

documentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/invoices/{invoice_id}/pdf",
		operationId: "getInvoicePdf",
		tags: ["Invoices"],
		summary: "The invoice as a printable PDF",
		description:
			"A4, with the seller (the Worker variable BILLING_COMPANY_NAME), number, issue and due dates, billing period, " +
			"bill-to, every line with quantity and amount, credits applied, amount due and status. Fonts are embedded " +
			"and the text is extractable.",
		request: { params: z.object({ invoice_id: z.string() }) },
		responses: {
			200: {
				description: "The invoice document",
				content: { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } },
			},
			...errorResponses(404),
		},
	}),
	async (c) => {
		const invoice = await getInvoice({
			...scopeOf(c),
			id: c.req.valid("param").invoice_id,
		});
		const bytes = await invoicePdf(invoice, c.env, await creditNotesOf(scopeOf(c), invoice));
		return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
			"Content-Type": "application/pdf",
			"Content-Disposition": `inline; filename="${invoice.number ?? invoice.id}.pdf"`,
			"Cache-Control": "private, no-store",
		});
	},
);

// The credit note's PDF lives here, beside the invoice's: credit-notes/ stays free of the PDF code.
documentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/credit-notes/{credit_note_id}/pdf",
		operationId: "getCreditNotePdf",
		tags: ["Credit notes"],
		summary: "The credit note as a printable PDF",
		description: "A4, in the invoice's style: the credit note's and the invoice's numbers, lines and amount.",
		request: { params: CreditNoteParams },
		responses: {
			200: {
				description: "The credit note document",
				content: { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } },
			},
			...errorResponses(404),
		},
	}),
	async (c) => {
		const inScope = scopeOf(c);
		const note = await getCreditNote({ ...inScope, id: c.req.valid("param").credit_note_id });
		const invoice = await getInvoice({ ...inScope, id: note.invoice_id });
		const bytes = await creditNotePdf(note, invoice, c.env);
		return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
			"Content-Type": "application/pdf",
			"Content-Disposition": `inline; filename="${note.number}.pdf"`,
			"Cache-Control": "private, no-store",
		});
	},
);
