/** One invoice: its lines, and pay or void while it is open. */
import type { PageContext } from "../context";
import { fill, formValues, h } from "../dom";
import { dateTime, money, quantity } from "../format";
import type { Account, Invoice } from "../types";
import { badge, confirmAction, field, link, runInto, section, table } from "../ui";

export async function invoicePage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const invoice = await ctx.api.get<Invoice>(`/invoices/${id}`, undefined, ctx.signal);
	const account = await ctx.api
		.get<Account>(`/accounts/${invoice.account_id}`, undefined, ctx.signal)
		.catch(() => null);
	const format = (amount: number) => money(amount, invoice.currency);
	fill(
		ctx.view,
		h("p", { class: "crumbs" }, link("#/invoices", "Invoices"), " / ", invoice.number),
		h("h1", null, `Invoice ${invoice.number} `, badge(invoice.status)),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Customer"),
			h("dd", null, link(`#/customers/${invoice.account_id}`, account?.name ?? invoice.account_id)),
			h("dt", null, "Billing period"),
			h("dd", null, `${invoice.billing_period} (${invoice.kind})`),
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
		),
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
		),
		invoice.status === "open" ? actions(ctx, invoice) : null,
	);
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
	const voidButton = h("button", { type: "button", class: "danger" }, "Void invoice");
	voidButton.addEventListener("click", async () => {
		const sure = await confirmAction(
			`Void invoice ${invoice.number} of ${money(invoice.amount, invoice.currency)}? A void invoice cannot be paid or reopened.`,
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
	return section("Settle", payForm, h("div", { class: "actions" }, voidButton), result);
}
