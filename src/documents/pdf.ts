/**
 * The PDF documents, for the routes that answer them. What renders them (pdf-lib, @pdf-lib/fontkit, the Inter
 * fonts) is imported here on the first document an isolate makes, not when the Worker starts: fontkit alone
 * decompresses its tables as its module loads, and a new isolate would pay that before every first event it
 * answers (docs/scaling.md#cold-start). After the first document the modules are loaded and this costs nothing.
 */
import type { CreditNoteView } from "../credit-notes/credit-notes";
import type { Env } from "../env";
import type { InvoiceView } from "../invoicing/invoices";
import { sellerName } from "./seller";

async function renderers() {
	const [invoice, creditNote, fonts] = await Promise.all([
		import("./invoice-pdf"),
		import("./credit-note-pdf"),
		import("./fonts"),
	]);
	return { ...invoice, ...creditNote, ...fonts };
}

/** The invoice as a PDF, from the seller of `env`, with the credit notes issued against it. */
export async function invoicePdf(
	invoice: InvoiceView,
	env: Env,
	creditNotes: readonly CreditNoteView[],
): Promise<Uint8Array> {
	const { renderInvoicePdf, interFonts } = await renderers();
	return renderInvoicePdf(invoice, { seller: sellerName(env), fonts: interFonts, creditNotes });
}

/** The credit note on `invoice` as a PDF, from the seller of `env`. */
export async function creditNotePdf(
	note: CreditNoteView,
	invoice: InvoiceView,
	env: Env,
): Promise<Uint8Array> {
	const { renderCreditNotePdf, interFonts } = await renderers();
	return renderCreditNotePdf(note, invoice, { seller: sellerName(env), fonts: interFonts });
}
