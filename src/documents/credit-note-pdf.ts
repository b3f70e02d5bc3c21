/**
 * The credit note as a printable document (docs/credit-notes.md), in the invoice's style (invoice-pdf.ts): pure,
 * credit note and its invoice in, PDF bytes out; Inter embedded as subsets, so the text is extractable.
 */
import type { InvoiceView } from "../invoicing/invoices";
import { formatDate, formatMoney, formatPeriod } from "./format";
import { finishDocument, type InvoiceDocumentOptions, startDocument } from "./invoice-pdf";
import { ACCENT, BAND, INK, MARGIN, MUTED, PAGE, RULE, textRight, wrap } from "./layout";

const REASONS = {
	duplicate: "Duplicate charge",
	fraudulent: "Fraudulent charge",
	order_change: "Order change",
	product_unsatisfactory: "Product unsatisfactory",
	billing_error: "Billing error",
	other: "Other",
} as const;

/**
 * What the document shows of a credit note. The credit notes' view (credit-notes/credit-notes.ts) fits it; a
 * reason without a label here makes that call fail to compile. Documents import nothing of the credit notes.
 */
export interface CreditNoteDocument {
	number: string;
	currency: string;
	amount: number;
	reason: keyof typeof REASONS;
	memo: string | null;
	lines: { description: string; amount: number }[];
	applied: { to_invoice: number; refunded: number; credited: number };
	created_at: string;
}

export async function renderCreditNotePdf(
	note: CreditNoteDocument,
	invoice: InvoiceView,
	options: InvoiceDocumentOptions,
): Promise<Uint8Array> {
	const { doc, pen } = await startDocument(options, {
		title: `Credit note ${note.number}`,
		subject: `Credit note ${note.number} on invoice ${invoice.number}`,
		date: note.created_at,
	});
	const page = doc.addPage([PAGE.width, PAGE.height]);
	const right = PAGE.width - MARGIN;
	const money = (amount: number) => formatMoney(amount, note.currency);

	let y = PAGE.height - MARGIN - 8;
	page.drawText(options.seller, { x: MARGIN, y, size: 16, font: pen.bold, color: INK });
	textRight(page, "CREDIT NOTE", right, y - 2, pen.bold, 24, ACCENT);
	y -= 58;
	page.drawLine({
		start: { x: MARGIN, y: y + 20 },
		end: { x: right, y: y + 20 },
		thickness: 0.75,
		color: RULE,
	});

	page.drawText("BILL TO", { x: MARGIN, y, size: 8, font: pen.bold, color: MUTED });
	let left = y - 16;
	page.drawText(invoice.bill_to.name, { x: MARGIN, y: left, size: 11, font: pen.bold, color: INK });
	left -= 14;
	page.drawText(invoice.bill_to.email, { x: MARGIN, y: left, size: 9.5, font: pen.regular, color: INK });

	const facts: [string, string][] = [
		["Credit note number", note.number],
		["Issue date", formatDate(note.created_at)],
		["Invoice number", invoice.number ?? "—"],
		["Billing period", formatPeriod(invoice.billing_period)],
		["Reason", REASONS[note.reason]],
	];
	const labelX = right - 230;
	let factsY = y;
	for (const [label, value] of facts) {
		page.drawText(label, { x: labelX, y: factsY, size: 9, font: pen.regular, color: MUTED });
		textRight(page, value, right, factsY, pen.bold, 9.5);
		factsY -= 15;
	}
	y = Math.min(left, factsY) - 34;

	page.drawRectangle({ x: MARGIN, y: y - 7, width: right - MARGIN, height: 22, color: BAND });
	page.drawText("DESCRIPTION", { x: MARGIN + 8, y, size: 8, font: pen.bold, color: MUTED });
	textRight(page, `AMOUNT (${note.currency})`, right - 8, y, pen.bold, 8, MUTED);
	y -= 28;
	// Lines past what one page holds are summed in the total; a credit note is rarely more than a few lines.
	for (const line of note.lines.slice(0, 20)) {
		const text = wrap(line.description, pen.regular, 9.5, right - MARGIN - 160);
		text.forEach((part, i) => {
			page.drawText(part, { x: MARGIN + 8, y: y - i * 13, size: 9.5, font: pen.regular, color: INK });
		});
		textRight(page, money(line.amount), right - 8, y, pen.regular, 9.5);
		y -= (text.length - 1) * 13 + 24;
	}
	page.drawLine({
		start: { x: MARGIN, y: y + 13 },
		end: { x: right, y: y + 13 },
		thickness: 0.75,
		color: INK,
	});
	y -= 6;
	const rows: [string, number][] = [
		["Off the amount due", note.applied.to_invoice],
		["Refunded", note.applied.refunded],
		["Given as credit", note.applied.credited],
	];
	for (const [label, amount] of rows) {
		page.drawText(label, { x: labelX, y, size: 9.5, font: pen.regular, color: MUTED });
		textRight(page, money(amount), right - 8, y, pen.regular, 9.5);
		y -= 17;
	}
	y -= 12;
	page.drawRectangle({ x: labelX - 8, y: y - 10, width: right - labelX + 8, height: 30, color: BAND });
	// One run of text, so that any extraction keeps the label and the figure together.
	textRight(page, `Total credited ${money(note.amount)}`, right - 8, y, pen.bold, 12);
	y -= 40;
	const notes = [`This credit note corrects invoice ${invoice.number}.`];
	if (note.memo) notes.push(note.memo);
	for (const text of notes) {
		for (const part of wrap(text, pen.regular, 9, right - MARGIN)) {
			if (y < MARGIN + 10) break;
			page.drawText(part, { x: MARGIN, y, size: 9, font: pen.regular, color: MUTED });
			y -= 13;
		}
	}
	page.drawText(`${options.seller} · ${note.number}`, {
		x: MARGIN,
		y: MARGIN - 20,
		size: 8,
		font: pen.regular,
		color: MUTED,
	});
	return finishDocument(doc, pen);
}
