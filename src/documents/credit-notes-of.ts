/** The credit notes an invoice document names (invoice-totals.ts): none read when the invoice has none. */
import { type CreditNoteView, listCreditNotes } from "../credit-notes/credit-notes";
import type { InScope } from "../db/rows";
import type { InvoiceView } from "../invoicing/invoices";

/** An invoice's credit notes (the newest 100: a document names no more). */
export async function creditNotesOf(input: InScope, invoice: InvoiceView): Promise<CreditNoteView[]> {
	if (invoice.credit_notes.length === 0) return [];
	const { items } = await listCreditNotes({
		...input,
		filters: { invoice_id: invoice.id },
		limit: 100,
		offset: 0,
	});
	return items;
}
