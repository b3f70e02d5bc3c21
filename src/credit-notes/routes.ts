import { createRoute } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { pageOf, pageSchema } from "../schemas/pages";
import { getCreditNote, listCreditNotes } from "./credit-notes";
import { issueCreditNote } from "./issue";
import {
	CreateCreditNote,
	CreditNote,
	CreditNoteParams,
	InvoiceParams,
	ListCreditNotesQuery,
} from "./schemas";

export const creditNoteRoutes = apiRouter();

creditNoteRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/invoices/{invoice_id}/credit-notes",
		operationId: "createCreditNote",
		tags: ["Credit notes"],
		summary: "Credit an invoice",
		description:
			"Give exactly one of amount and lines. The amount goes first off what is still unpaid of the invoice's " +
			"amount due (an invoice left with nothing due is paid, with no payment); the rest is refunded " +
			"(refund: true, a payment of kind refund with a negative amount) or given back as a credit grant of the " +
			"account. 409 when the invoice is void or a draft, or when the amount is more than the invoice's amount minus " +
			"earlier credit notes. Emits credit_note.created.",
		request: { params: InvoiceParams, body: { required: true, ...json(CreateCreditNote) } },
		responses: {
			201: { description: "The credit note", ...json(CreditNote) },
			...errorResponses(...bodyErrors, 404, 409, 502),
		},
	}),
	async (c) => {
		const note = await writeOnce(
			c,
			(mark) =>
				issueCreditNote({
					...scopeOf(c),
					env: c.env,
					id: c.req.valid("param").invoice_id,
					input: c.req.valid("json"),
					mark,
				}),
			([id]) => getCreditNote({ ...scopeOf(c), id: id as string }),
		);
		return c.json(note, 201);
	},
);

creditNoteRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/credit-notes",
		operationId: "listCreditNotes",
		tags: ["Credit notes"],
		summary: "List credit notes",
		request: { query: ListCreditNotesQuery },
		responses: {
			200: { description: "Credit notes, newest first", ...json(pageSchema("credit_notes", CreditNote)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const { limit, offset, ...filters } = c.req.valid("query");
		const { items, total } = await listCreditNotes({ ...scopeOf(c), filters, limit, offset });
		return c.json(pageOf("credit_notes", items, total, { limit, offset }), 200);
	},
);

creditNoteRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/credit-notes/{credit_note_id}",
		operationId: "getCreditNote",
		tags: ["Credit notes"],
		summary: "Get a credit note",
		request: { params: CreditNoteParams },
		responses: { 200: { description: "The credit note", ...json(CreditNote) }, ...errorResponses(404) },
	}),
	async (c) => c.json(await getCreditNote({ ...scopeOf(c), id: c.req.valid("param").credit_note_id }), 200),
);
