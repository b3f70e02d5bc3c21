/**
 * "Pay online: <url>" under an open invoice's totals, when it is collected through a Stripe Checkout page
 * (docs/payments.md#collection). The line is one run of text, so that pdftotext reads label and address together;
 * it is made smaller to fit the page's width, and only an address too long even then is broken over lines. A link
 * annotation over it opens the whole address in a PDF reader, however it was broken.
 */
import { PDFHexString, PDFName, type PDFPage, PDFString } from "pdf-lib";
import type { InvoiceView } from "../invoicing/invoices";
import { ACCENT, MARGIN, PAGE, type Pen } from "./layout";

const LABEL = "Pay online: ";
const SIZE = 9;
/** The smallest size the line is set in before the address is broken instead. */
const SMALLEST = 6.5;
const LEADING = 1.45;
const WIDTH = PAGE.width - 2 * MARGIN;

/** The Checkout page of an open invoice, or null: nothing to say. */
export function paymentLinkOf(invoice: InvoiceView): string | null {
	return invoice.status === "open" ? invoice.collection.payment_url : null;
}

/** The lines and the size to set them in: one line when it fits at SMALLEST or larger. */
function layout(pen: Pen, url: string): { lines: string[]; size: number } {
	const whole = `${LABEL}${url}`;
	const fitted = (SIZE * WIDTH) / pen.regular.widthOfTextAtSize(whole, SIZE);
	if (fitted >= SMALLEST) return { lines: [whole], size: Math.min(SIZE, fitted) };
	// An address has no spaces to break at: fill each line with as many characters as fit.
	const widthOf = (text: string) => pen.regular.widthOfTextAtSize(text, SMALLEST);
	const lines: string[] = [];
	let line = LABEL;
	let width = widthOf(LABEL);
	for (const char of url) {
		// Summed glyph by glyph (measuring the growing line each time is quadratic); a margin covers kerning.
		const next = widthOf(char);
		if (width + next > WIDTH - 4) {
			lines.push(line);
			line = "";
			width = 0;
		}
		line += char;
		width += next;
	}
	lines.push(line);
	return { lines, size: SMALLEST };
}

const hexBytes = (text: string) =>
	[...new TextEncoder().encode(text)].map((byte) => byte.toString(16).padStart(2, "0")).join("");

/** The height the line needs on the page (0 without a link). */
export function payOnlineHeight(pen: Pen, invoice: InvoiceView): number {
	const url = paymentLinkOf(invoice);
	if (url === null) return 0;
	const { lines, size } = layout(pen, url);
	return lines.length * size * LEADING + 8;
}

/** Draws the line from `top` down, with its link; returns where it ends. */
export function drawPayOnline(page: PDFPage, pen: Pen, invoice: InvoiceView, top: number): number {
	const url = paymentLinkOf(invoice);
	if (url === null) return top;
	const { lines, size } = layout(pen, url);
	let y = top - 4;
	for (const line of lines) {
		page.drawText(line, { x: MARGIN, y, size, font: pen.regular, color: ACCENT });
		y -= size * LEADING;
	}
	const widest = Math.max(...lines.map((line) => pen.regular.widthOfTextAtSize(line, size)));
	const link = page.doc.context.obj({
		Type: "Annot",
		Subtype: "Link",
		Rect: [MARGIN, y + size * LEADING - 2, MARGIN + widest, top - 4 + size],
		Border: [0, 0, 0],
		// Hex, byte for byte: an address may hold parentheses or backslashes, which a literal string would need escaped.
		A: { Type: "Action", S: "URI", URI: PDFHexString.of(hexBytes(url)) },
	});
	page.node.addAnnot(page.doc.context.register(link));
	// Named so that readers that list a page's links show where it goes.
	link.set(PDFName.of("Contents"), PDFString.of(`Pay invoice ${invoice.number ?? ""} online`.trim()));
	return y;
}
