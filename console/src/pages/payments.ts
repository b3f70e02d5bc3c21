/** Payments (CONTRACT §20): every recorded payment, by customer or invoice (GET /v1/payments). */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, formValues, h } from "../dom";
import { money } from "../format";
import { nameOr, namesOf } from "../lookups";
import type { List, Payment } from "../types";
import { field, fillWhenReady, ident, link, pager, section, table, when } from "../ui";

const PAGE = 20;

export async function paymentsPage(ctx: PageContext): Promise<void> {
	const accountId = ctx.query.get("account_id") ?? "";
	const invoiceId = ctx.query.get("invoice_id") ?? "";
	const accounts = await namesOf(ctx.api, "/accounts", "accounts", ctx.signal);
	const form = h(
		"form",
		{ class: "filters", "aria-label": "Filters" },
		field(
			"Customer",
			h(
				"select",
				{ name: "account_id" },
				h("option", { value: "" }, "any"),
				[...accounts].map(([id, name]) => h("option", { value: id, selected: id === accountId }, name)),
			),
		),
		field("Invoice id", h("input", { name: "invoice_id", value: invoiceId, placeholder: "inv_…" })),
		h("button", { type: "submit" }, "Filter"),
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		ctx.go(hashOf("/payments", formValues(form)));
	});
	const slot = h("div");
	fill(ctx.view, h("h1", null, "Payments"), section("Payments", form, slot));
	await fillWhenReady(slot, ctx.signal, async () => {
		const payments = await ctx.api.get<List<"payments", Payment>>(
			"/payments",
			{ account_id: accountId, invoice_id: invoiceId, limit: PAGE, offset: pageOffset(ctx.query) },
			ctx.signal,
		);
		return h(
			"div",
			null,
			table(
				["paid", "customer", "invoice", "reference", "amount"],
				(payments.payments ?? []).map((payment) => [
					when(payment.paid_at),
					link(`#/customers/${payment.account_id}`, nameOr(accounts, payment.account_id)),
					link(`#/invoices/${payment.invoice_id}`, payment.invoice_id),
					payment.reference ? ident(payment.reference) : "—",
					h("span", { class: "num", "data-payment": payment.id }, money(payment.amount, payment.currency)),
				]),
				"No payments yet. Mark an open invoice as paid to record one.",
			),
			pager(payments, (next) =>
				ctx.go(hashOf("/payments", { account_id: accountId, invoice_id: invoiceId, offset: next })),
			),
		);
	});
}
