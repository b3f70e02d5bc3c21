/**
 * The invoice document's totals and the sentences under them (invoice-pdf.ts). Two sums read on the page:
 * subtotal − credits applied − what credit notes took off = amount due, and amount due − amount paid (net of
 * refunds) − each refund = amount remaining. Every credit note is named with its number and amount, and a refund
 * stands on its own line, never as a negative payment.
 */
import type { PDFPage } from "pdf-lib";
import type { CreditNoteView } from "../credit-notes/credit-notes";
import type { InvoiceView } from "../invoicing/invoices";
import { Decimal } from "../lib/decimal";
import { formatDate, formatMoney } from "./format";
import { BAND, INK, MARGIN, MUTED, PAGE, type Pen, textRight, wrap } from "./layout";

/** What the document needs of a credit note of the invoice. */
export type InvoiceCreditNote = Pick<
	CreditNoteView,
	"number" | "amount" | "reason" | "applied" | "created_at"
>;

const AMOUNT_RIGHT = PAGE.width - MARGIN - 8;
const LABEL_X = PAGE.width - MARGIN - 230;
const SIZE = 9.5;

/** A refund is a payment row with a negative amount; its reference is the credit note's number. */
const isRefund = (payment: InvoiceView["payments"][number]) => payment.amount < 0;

/** The height the totals and their sentences need, to keep them on one page. */
export function totalsHeight(invoice: InvoiceView, notes: readonly InvoiceCreditNote[]): number {
	return 150 + (invoice.payments.length + notes.length) * 17;
}

/** Draws the totals from `y` down; returns where the sentences end. */
export function drawTotals(
	page: PDFPage,
	pen: Pen,
	invoice: InvoiceView,
	notes: readonly InvoiceCreditNote[],
	top: number,
): number {
	let y = top;
	const money = (amount: number | Decimal) =>
		formatMoney(typeof amount === "number" ? amount : amount.toNumber(), invoice.currency);
	const row = (label: string, value: string, bold = false) => {
		page.drawText(label, { x: LABEL_X, y, size: SIZE, font: bold ? pen.bold : pen.regular, color: MUTED });
		textRight(page, value, AMOUNT_RIGHT, y, bold ? pen.bold : pen.regular, SIZE);
		y -= 17;
	};

	// What credit notes took off what was still due (docs/credit-notes.md).
	const creditedOff = Decimal.from(invoice.amount)
		.sub(Decimal.from(invoice.credits_applied))
		.sub(Decimal.from(invoice.amount_due));
	row("Subtotal", money(invoice.amount));
	row("Credits applied", money(-invoice.credits_applied));
	if (!creditedOff.isZero()) row("Credit notes", money(creditedOff.negate()));
	y -= 12;
	page.drawRectangle({
		x: LABEL_X - 8,
		y: y - 10,
		width: PAGE.width - MARGIN - LABEL_X + 8,
		height: 30,
		color: BAND,
	});
	page.drawText("Amount due", { x: LABEL_X, y, size: 11, font: pen.bold, color: INK });
	textRight(page, money(invoice.amount_due), AMOUNT_RIGHT, y, pen.bold, 12);
	y -= 30;

	// What settled it: payments net of refunds, then each refund on its own line.
	const refunds = invoice.payments.filter(isRefund);
	row(refunds.length > 0 ? "Amount paid, net of refunds" : "Amount paid", money(invoice.amount_paid));
	for (const refund of refunds) {
		row(`Refunded, credit note ${refund.reference ?? ""}`.trim(), money(-refund.amount));
	}
	// One run of text, so that any extraction, by layout or in reading order, keeps label and figure together.
	textRight(page, `Amount remaining ${money(invoice.amount_remaining)}`, AMOUNT_RIGHT, y, pen.bold, SIZE);
	y -= 31;

	for (const sentence of settlement(invoice, notes)) {
		for (const part of wrap(sentence, pen.regular, 9, PAGE.width - 2 * MARGIN)) {
			page.drawText(part, { x: MARGIN, y, size: 9, font: pen.regular, color: MUTED });
			y -= 13;
		}
	}
	return y;
}

const REASON_WORDS: Record<InvoiceCreditNote["reason"], string> = {
	duplicate: "duplicate charge",
	fraudulent: "fraudulent charge",
	order_change: "order change",
	product_unsatisfactory: "product unsatisfactory",
	billing_error: "billing error",
	other: "other",
};

/** "Credit note CN-000004 of USD 20.00 (November 22, 2026, duplicate charge): USD 10.00 off the amount due, …" */
function creditNoteSentence(note: InvoiceCreditNote, currency: string): string {
	const money = (amount: number) => formatMoney(amount, currency);
	const parts = [
		note.applied.to_invoice > 0 && `${money(note.applied.to_invoice)} off the amount due`,
		note.applied.refunded > 0 && `${money(note.applied.refunded)} refunded`,
		note.applied.credited > 0 && `${money(note.applied.credited)} returned as account credit`,
	].filter((part): part is string => typeof part === "string");
	const about = `${formatDate(note.created_at)}, ${REASON_WORDS[note.reason]}`;
	return `Credit note ${note.number} of ${money(note.amount)} (${about}): ${parts.join(", ")}.`;
}

/** What settles the invoice, or what voided it, in sentences; credit notes oldest first. */
function settlement(invoice: InvoiceView, notes: readonly InvoiceCreditNote[]): string[] {
	const money = (amount: number) => formatMoney(amount, invoice.currency);
	const sentences: string[] = [];
	if (invoice.status === "paid") sentences.push("This invoice is paid: nothing remains due.");
	for (const payment of invoice.payments) {
		const on = `on ${formatDate(payment.paid_at)}`;
		sentences.push(
			isRefund(payment)
				? `Refunded ${money(-payment.amount)} ${on}${payment.reference ? ` — credit note ${payment.reference}` : ""}.`
				: `Paid ${money(payment.amount)} ${on}${payment.reference ? ` — reference ${payment.reference}` : ""}.`,
		);
	}
	if (invoice.status === "paid" && invoice.payments.length === 0) {
		const by = invoice.credits_applied > 0 || notes.length === 0 ? "prepaid credits" : "credit note";
		sentences.push(`Settled by ${by} on ${formatDate(invoice.paid_at ?? invoice.issued_at)}.`);
	}
	const oldestFirst = [...notes].sort((a, b) => a.created_at.localeCompare(b.created_at));
	for (const note of oldestFirst) sentences.push(creditNoteSentence(note, invoice.currency));
	if (invoice.status === "void")
		sentences.push(`Voided on ${formatDate(invoice.voided_at ?? invoice.issued_at)}; nothing is due.`);
	if (invoice.status === "open") {
		sentences.push(
			`Please pay ${money(invoice.amount_remaining)} by ${formatDate(invoice.due_at)}, quoting ${invoice.number}.`,
		);
	}
	return sentences;
}
