/** One invoice: its lines, and pay or void while it is open. */
import type { PageContext } from "../context";
import { type Child, fill, formValues, h } from "../dom";
import { dateTime, money, quantity } from "../format";
import type { Account, Invoice, InvoiceDocumentFields } from "../types";
import { badge, confirmAction, field, ident, link, runInto, section, table, when } from "../ui";
import { creditNotesSection, draftActions } from "./credit-notes";
import { collectionSection } from "./invoice-collection";

export async function invoicePage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const invoice = await ctx.api.get<Invoice & InvoiceDocumentFields>(
		`/invoices/${id}`,
		undefined,
		ctx.signal,
	);
	const account = await ctx.api
		.get<Account>(`/accounts/${invoice.account_id}`, undefined, ctx.signal)
		.catch(() => null);
	const format = (amount: number) => money(amount, invoice.currency);
	const creditNotes =
		invoice.status === "draft" ? null : await creditNotesSection(ctx, invoice).catch(() => null);
	fill(
		ctx.view,
		h("p", { class: "crumbs" }, link("#/invoices", "Invoices"), " / ", invoice.number ?? "Draft"),
		h("h1", null, `Invoice ${invoice.number ?? "(draft)"} `, badge(invoice.status)),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Customer"),
			h("dd", null, link(`#/customers/${invoice.account_id}`, account?.name ?? invoice.account_id)),
			...(invoice.payer_account_id === invoice.account_id
				? []
				: [
						h("dt", null, "Paid by"),
						h(
							"dd",
							null,
							link(`#/customers/${invoice.payer_account_id}`, invoice.payer_account_id, { class: "code" }),
						),
					]),
			h("dt", null, "Billing period"),
			h("dd", null, ident(invoice.billing_period), ` (${invoice.kind})`),
			h("dt", null, "Subscription"),
			h("dd", null, h("code", null, invoice.subscription_id)),
			h("dt", null, "Rate plan"),
			h("dd", null, h("code", null, invoice.rate_plan_id)),
			h("dt", null, "Issued"),
			h("dd", null, dateTime(invoice.issued_at)),
			h("dt", null, "Paid"),
			h("dd", null, dateTime(invoice.paid_at)),
			h("dt", null, "Voided"),
			h("dd", null, dateTime(invoice.voided_at)),
			invoice.due_at !== undefined && [h("dt", null, "Due"), h("dd", null, dateTime(invoice.due_at))],
			invoice.bill_to && [
				h("dt", null, "Bill to"),
				h(
					"dd",
					{ class: "bill-to" },
					invoice.bill_to.name,
					h("br"),
					invoice.bill_to.email,
					invoice.bill_to.billing_address && [
						h("br"),
						Object.values(invoice.bill_to.billing_address).filter(Boolean).join(", "),
					],
				),
			],
		),
		pdfActions(ctx, invoice),
		section(
			"Lines",
			table(
				["metric", "description", "quantity", "amount"],
				invoice.line_items.map((line) => [
					h("code", null, line.metric),
					line.description,
					h("span", { class: "num" }, quantity(line.quantity)),
					h("span", { class: "num" }, format(line.amount)),
				]),
				"This invoice has no lines.",
			),
			h("p", { class: "total", "data-value": invoice.amount }, `Total ${format(invoice.amount)}`),
			invoice.credits_applied !== undefined &&
				h(
					"p",
					{ class: "credits", "data-value": invoice.credits_applied },
					`Credits applied ${format(invoice.credits_applied)}`,
				),
			invoice.amount_due !== undefined &&
				h(
					"p",
					{ class: "total amount-due", "data-value": invoice.amount_due },
					`Amount due ${format(invoice.amount_due)}`,
				),
			settlement(invoice, format),
		),
		collectionSection(invoice),
		invoice.payments !== undefined &&
			section(
				"Payments and refunds",
				table(
					["date", "kind", "reference", "amount"],
					invoice.payments.map((payment) => [
						when(payment.paid_at),
						`${payment.amount < 0 ? "refund" : "payment"}${payment.provider === "stripe" ? " via Stripe" : ""}`,
						payment.reference ? ident(payment.reference) : "—",
						h("span", { class: "num" }, format(payment.amount)),
					]),
					"No payment recorded.",
				),
			),
		invoice.status === "draft" ? draftActions(ctx, invoice) : null,
		invoice.status === "open" || invoice.status === "draft" ? actions(ctx, invoice) : null,
		creditNotes,
	);
}

/**
 * What settled the amount due: paid (net of refunds), refunded by credit notes, and what remains, so that due −
 * paid − refunded = remaining reads on the page.
 */
function settlement(invoice: Invoice & InvoiceDocumentFields, format: (amount: number) => string): Child {
	if (invoice.amount_paid === undefined || invoice.payments === undefined) return null;
	const refunded = -invoice.payments.reduce((sum, p) => (p.amount < 0 ? sum + p.amount : sum), 0);
	const line = (cls: string, label: string, value: number) =>
		h("p", { class: `settled ${cls}`, "data-value": value }, `${label} ${format(value)}`);
	return [
		line("amount-paid", refunded > 0 ? "Paid, net of refunds" : "Paid", invoice.amount_paid),
		refunded > 0 && line("amount-refunded", "Refunded", refunded),
		line("amount-remaining", "Remaining", invoice.amount_remaining),
	];
}

function actions(ctx: PageContext, invoice: Invoice): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const pay = h("button", { type: "submit", class: "primary" }, "Mark as paid");
	const payForm = h(
		"form",
		{ class: "inline-form", "aria-label": "Pay" },
		field(
			"Payment reference (optional)",
			h("input", { name: "reference", maxlength: 200, placeholder: "e.g. bank transfer id" }),
		),
		pay,
	);
	payForm.addEventListener("submit", (event) => {
		event.preventDefault();
		const { reference } = formValues(payForm);
		void runInto(result, pay, async () => {
			await ctx.api.post(`/invoices/${invoice.id}/pay`, reference ? { reference } : {});
			ctx.refresh();
			return null;
		});
	});
	const draft = invoice.status === "draft";
	const voidButton = h(
		"button",
		{ type: "button", class: "danger" },
		draft ? "Discard draft" : "Void invoice",
	);
	voidButton.addEventListener("click", async () => {
		const sure = await confirmAction(
			draft
				? `Discard this draft of ${money(invoice.amount, invoice.currency)}? The next generation of its period makes a new one.`
				: `Void invoice ${invoice.number} of ${money(invoice.amount, invoice.currency)}? A void invoice cannot be paid or reopened.`,
			"Void it",
			ctx.signal,
		);
		if (!sure || ctx.signal.aborted) return;
		await runInto(result, voidButton, async () => {
			await ctx.api.post(`/invoices/${invoice.id}/void`);
			ctx.refresh();
			return null;
		});
	});
	if (draft) return section("Discard", h("div", { class: "actions" }, voidButton), result);
	return section("Settle", payForm, h("div", { class: "actions" }, voidButton), result);
}

/**
 * The printable invoice (GET /v1/invoices/{id}/pdf, CONTRACT §20). The API wants the key as a header, so the PDF
 * is fetched here and handed to the browser as a blob: opened in a new tab, or saved under the invoice's number.
 */
function pdfActions(ctx: PageContext, invoice: Invoice): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const fetchPdf = async () =>
		URL.createObjectURL(await ctx.api.blob(`/invoices/${invoice.id}/pdf`, ctx.signal));
	const open = h("button", { type: "button" }, "Open PDF");
	open.addEventListener("click", () =>
		runInto(result, open, async () => {
			const url = await fetchPdf();
			window.open(url, "_blank", "noopener");
			setTimeout(() => URL.revokeObjectURL(url), 60_000);
			return null;
		}),
	);
	const download = h("button", { type: "button" }, "Download PDF");
	download.addEventListener("click", () =>
		runInto(result, download, async () => {
			const url = await fetchPdf();
			const anchor = h("a", { href: url, download: `${invoice.number}.pdf`, class: "hidden" });
			document.body.append(anchor);
			anchor.click();
			anchor.remove();
			setTimeout(() => URL.revokeObjectURL(url), 60_000);
			return h("p", { class: "ok" }, `Saved ${invoice.number}.pdf.`);
		}),
	);
	return h("div", { class: "pdf" }, h("div", { class: "actions" }, open, download), result);
}
