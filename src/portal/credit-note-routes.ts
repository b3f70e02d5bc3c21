/** The account's credit notes in the customer portal (docs/portal.md, docs/credit-notes.md): a list and PDFs. */
import { createRoute, z } from "@hono/zod-openapi";
import { getCreditNote, listCreditNotes } from "../credit-notes/credit-notes";
import { CreditNote, CreditNoteParams } from "../credit-notes/schemas";
import { creditNotePdf } from "../documents/pdf";
import { scopeOf } from "../http/context";
import { ErrorBody } from "../http/errors";
import { json } from "../http/openapi";
import { getInvoice } from "../invoicing/invoices";
import { notFound } from "../lib/errors";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { newPortalRouter } from "./gate";

const TAGS = ["Customer portal"];
const security = [{ portalToken: [] }];
const errors = (...statuses: number[]) =>
	Object.fromEntries(statuses.map((s) => [s, { description: "Error", ...json(ErrorBody) }]));

const PortalCreditNotesQuery = z.strictObject({
	...pageQuery,
	invoice_id: z.string().min(1).optional(),
});

export const portalCreditNoteRoutes = newPortalRouter();

portalCreditNoteRoutes.openapi(
	createRoute({
		method: "get",
		path: "/credit-notes",
		operationId: "listPortalCreditNotes",
		tags: TAGS,
		security,
		summary: "The account's credit notes, newest first",
		request: { query: PortalCreditNotesQuery },
		responses: {
			200: { description: "Credit notes", ...json(pageSchema("credit_notes", CreditNote)) },
			...errors(400, 401, 429, 500),
		},
	}),
	async (c) => {
		const { limit, offset, invoice_id } = c.req.valid("query");
		const { items, total } = await listCreditNotes({
			...scopeOf(c),
			filters: { account_id: c.get("session").accountId, invoice_id },
			limit,
			offset,
		});
		return c.json(pageOf("credit_notes", items, total, { limit, offset }), 200);
	},
);

portalCreditNoteRoutes.openapi(
	createRoute({
		method: "get",
		path: "/credit-notes/{credit_note_id}/pdf",
		operationId: "getPortalCreditNotePdf",
		tags: TAGS,
		security,
		summary: "One of the account's credit notes as a PDF",
		description: "The same document as GET /v1/credit-notes/{credit_note_id}/pdf.",
		request: { params: CreditNoteParams },
		responses: {
			200: {
				description: "The credit note document",
				content: { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } },
			},
			...errors(401, 404, 429, 500),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").credit_note_id;
		const note = await getCreditNote({ ...scopeOf(c), id });
		if (note.account_id !== c.get("session").accountId) throw notFound("credit note", id);
		const invoice = await getInvoice({ ...scopeOf(c), id: note.invoice_id });
		const bytes = await creditNotePdf(note, invoice, c.env);
		return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
			"Content-Type": "application/pdf",
			"Content-Disposition": `inline; filename="${note.number}.pdf"`,
		});
	},
);
