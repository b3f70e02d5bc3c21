/**
 * The portal's documents: invoices and credit notes, each with its PDF, and the payments and refunds that settled
 * them. A refund is a credit note's doing, so it reads as a refund naming its credit note, and the credit note
 * itself stands in its own list beside the invoices.
 */
import type { Api } from "../api";
import { type Child, h } from "../dom";
import { dateTime, day, money } from "../format";
import { badge, ident, runInto, section, table } from "../ui";
import type {
	PortalCreditNote,
	PortalCreditNotes,
	PortalInvoice,
	PortalInvoices,
	PortalPayments,
} from "./types";

/** A button that downloads one document (an invoice's or a credit note's PDF) with the portal's token. */
function pdfButton(
	api: Api,
	path: string,
	name: string,
	label: string,
	result: HTMLElement,
): HTMLButtonElement {
	const button = h("button", { type: "button", class: "small", "aria-label": label }, "PDF");
	button.addEventListener("click", () =>
		runInto(result, button, async () => {
			const url = URL.createObjectURL(await api.blob(path));
			// A download link works where a new tab would be taken for a pop-up.
			const anchor = h("a", { href: url, download: `${name}.pdf`, hidden: true });
			document.body.append(anchor);
			anchor.click();
			anchor.remove();
			setTimeout(() => URL.revokeObjectURL(url), 60_000);
			return h("p", { class: "ok" }, `Downloaded ${name}.pdf.`);
		}),
	);
	return button;
}

const num = (text: string): HTMLElement => h("span", { class: "num" }, text);

/**
 * "Pay" for an open invoice that can be paid online: a plain link to the payment page (Stripe Checkout), opened
 * only when the customer follows it. Nothing to do otherwise.
 */
function payLink(invoice: PortalInvoice): HTMLElement | string {
	const url = invoice.collection?.payment_url;
	if (invoice.status !== "open" || !url) return "—";
	return h(
		"a",
		{
			href: url,
			class: "button primary pay",
			rel: "noopener noreferrer",
			target: "_blank",
			"aria-label": `Pay invoice ${invoice.number} online`,
		},
		"Pay",
	);
}

export function invoiceSection(api: Api, invoices: PortalInvoices): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	return section(
		"Invoices",
		table(
			["invoice", "period", "status", "amount due", "due by", "pay", "document"],
			invoices.invoices.map((invoice) => [
				ident(invoice.number, "invoice-number"),
				ident(invoice.billing_period),
				badge(invoice.status),
				num(money(invoice.amount_due, invoice.currency)),
				invoice.status === "open" ? ident(day(invoice.due_at)) : "—",
				payLink(invoice),
				pdfButton(
					api,
					`/invoices/${invoice.id}/pdf`,
					invoice.number,
					`Open the PDF of invoice ${invoice.number}`,
					result,
				),
			]),
			"No invoices yet.",
		),
		invoices.total > invoices.invoices.length &&
			h("p", { class: "muted" }, `The latest ${invoices.invoices.length} of ${invoices.total} invoices.`),
		result,
	);
}

const REASONS: Record<PortalCreditNote["reason"], string> = {
	duplicate: "Duplicate charge",
	fraudulent: "Fraudulent charge",
	order_change: "Order change",
	product_unsatisfactory: "Product unsatisfactory",
	billing_error: "Billing error",
	other: "Other",
};

/** Where a credit note's amount went, in words: off what was due, refunded, or returned as credit. */
function appliedText(note: PortalCreditNote): string {
	const m = (n: number) => money(n, note.currency);
	return [
		note.applied.to_invoice > 0 && `${m(note.applied.to_invoice)} off the amount due`,
		note.applied.refunded > 0 && `${m(note.applied.refunded)} refunded`,
		note.applied.credited > 0 && `${m(note.applied.credited)} returned as credit`,
	]
		.filter((part): part is string => typeof part === "string")
		.join(", ");
}

export function creditNoteSection(api: Api, notes: PortalCreditNotes, invoices: PortalInvoices): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const invoiceNumber = new Map(invoices.invoices.map((i) => [i.id, i.number]));
	return section(
		"Credit notes",
		table(
			["credit note", "invoice", "amount", "reason", "issued", "document"],
			notes.credit_notes.map((note) => [
				ident(note.number, "credit-note-number"),
				ident(invoiceNumber.get(note.invoice_id) ?? note.invoice_id),
				// One element a cell: a narrow screen lays each cell out as "label  value".
				h(
					"span",
					null,
					num(money(note.amount, note.currency)),
					h("small", { class: "muted applied" }, appliedText(note)),
				),
				REASONS[note.reason] ?? note.reason,
				ident(day(note.created_at)),
				pdfButton(
					api,
					`/credit-notes/${note.id}/pdf`,
					note.number,
					`Open the PDF of credit note ${note.number}`,
					result,
				),
			]),
			"No credit notes.",
		),
		notes.total > notes.credit_notes.length &&
			h("p", { class: "muted" }, `The latest ${notes.credit_notes.length} of ${notes.total} credit notes.`),
		result,
	);
}

export function paymentSection(payments: PortalPayments, invoices: PortalInvoices): HTMLElement {
	const invoiceNumber = new Map(invoices.invoices.map((i) => [i.id, i.number]));
	const rows: Child[][] = payments.payments.map((payment) => {
		// A refund is a negative payment whose reference is its credit note's number.
		const refund = payment.kind === "refund" || payment.amount < 0;
		return [
			ident(dateTime(payment.paid_at)),
			`${refund ? "Refund" : "Payment"}${payment.provider === "stripe" ? " via Stripe" : ""}`,
			ident(invoiceNumber.get(payment.invoice_id) ?? payment.invoice_id),
			refund && payment.reference
				? h("span", null, "credit note ", ident(payment.reference))
				: (payment.reference ?? "—"),
			num(money(refund ? Math.abs(payment.amount) : payment.amount, payment.currency)),
		];
	});
	return section(
		"Payments and refunds",
		table(["date", "kind", "invoice", "reference", "amount"], rows, "No payments recorded."),
	);
}
