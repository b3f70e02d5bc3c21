/** Invoices: filtered list (status, period, account, subscription) and generation for a billing period. */
import { hashOf, type PageContext, pageOffset } from "../context";
import { currentPeriod, shiftPeriod } from "../dates";
import { fill, formValues, h } from "../dom";
import { day, money } from "../format";
import { nameOr, namesOf } from "../lookups";
import type { Invoice, List } from "../types";
import { badge, field, ident, link, pager, runInto, section, table } from "../ui";

const PAGE = 20;
const FILTERS = ["status", "billing_period", "account_id", "subscription_id"] as const;

export async function invoicesPage(ctx: PageContext): Promise<void> {
	const filters = Object.fromEntries(FILTERS.map((name) => [name, ctx.query.get(name) ?? ""]));
	const offset = pageOffset(ctx.query);
	const accounts = await namesOf(ctx.api, "/accounts", "accounts", ctx.signal);
	const listSlot = h("div");
	const showList = async () => {
		const invoices = await ctx.api.get<List<"invoices", Invoice>>(
			"/invoices",
			{ ...filters, limit: PAGE, offset },
			ctx.signal,
		);
		fill(listSlot, invoiceTable(ctx, invoices, accounts, filters));
	};
	await showList();
	const accountOptions = [...accounts].map(([id, name]) => ({ id, name }));

	const filterForm = h(
		"form",
		{ class: "filters", "aria-label": "Filters" },
		field(
			"Status",
			h(
				"select",
				{ name: "status" },
				["", "draft", "open", "paid", "void"].map((s) =>
					h("option", { value: s, selected: filters.status === s }, s || "any"),
				),
			),
		),
		field(
			"Billing period",
			h("input", { type: "month", name: "billing_period", value: filters.billing_period }),
		),
		field(
			"Account",
			h(
				"select",
				{ name: "account_id" },
				h("option", { value: "" }, "any"),
				accountOptions.map((a) =>
					h("option", { value: a.id, selected: filters.account_id === a.id }, a.name),
				),
			),
		),
		field(
			"Subscription id",
			h("input", { name: "subscription_id", value: filters.subscription_id, placeholder: "sub_…" }),
		),
		h("button", { type: "submit" }, "Filter"),
	);
	filterForm.addEventListener("submit", (event) => {
		event.preventDefault();
		ctx.go(hashOf("/invoices", formValues(filterForm)));
	});

	fill(
		ctx.view,
		h("h1", null, "Invoices"),
		generateSection(ctx, accountOptions, showList),
		section("Invoices", filterForm, listSlot),
	);
}

function invoiceTable(
	ctx: PageContext,
	invoices: List<"invoices", Invoice>,
	accounts: Map<string, string>,
	filters: Record<string, string>,
): HTMLElement {
	return h(
		"div",
		null,
		h("p", { class: "muted" }, `${invoices.total} matching.`),
		table(
			["number", "account", "period", "kind", "status", "amount", "issued"],
			invoices.invoices.map((invoice) => [
				ident(link(`#/invoices/${invoice.id}`, invoice.number ?? "Draft")),
				link(`#/customers/${invoice.account_id}`, nameOr(accounts, invoice.account_id)),
				ident(invoice.billing_period),
				invoice.kind,
				badge(invoice.status),
				h("span", { class: "num" }, money(invoice.amount, invoice.currency)),
				ident(day(invoice.issued_at)),
			]),
			"No invoices match.",
		),
		pager(invoices, (next) => ctx.go(hashOf("/invoices", { ...filters, offset: next }))),
	);
}

function generateSection(
	ctx: PageContext,
	accounts: { id: string; name: string }[],
	showList: () => Promise<void>,
): HTMLElement {
	const result = h("div", { class: "generate-result", "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Generate invoices");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Generate invoices" },
		field(
			"Billing period",
			h("input", {
				type: "month",
				name: "billing_period",
				value: shiftPeriod(currentPeriod(), -1),
				max: currentPeriod(),
				required: true,
			}),
		),
		field(
			"Account",
			h(
				"select",
				{ name: "account_id" },
				h("option", { value: "" }, "all accounts"),
				accounts.map((a) => h("option", { value: a.id }, a.name)),
			),
		),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const { billing_period, account_id } = formValues(form);
		void runInto(result, button, async () => {
			const body = account_id ? { billing_period, account_id } : { billing_period };
			const created = await ctx.api.post<{ invoices: Invoice[] }>("/invoices/generate", body);
			await showList();
			if (created.invoices.length === 0) {
				return h(
					"p",
					{ class: "ok" },
					`Nothing new to invoice for ${billing_period}: everything was already billed.`,
				);
			}
			return h(
				"div",
				{ class: "ok" },
				h(
					"p",
					null,
					`Created ${created.invoices.length} invoice${created.invoices.length === 1 ? "" : "s"} for ${billing_period}:`,
				),
				h(
					"ul",
					null,
					created.invoices.map((invoice) =>
						h(
							"li",
							null,
							ident(link(`#/invoices/${invoice.id}`, invoice.number ?? "Draft")),
							` · ${invoice.kind} · ${money(invoice.amount, invoice.currency)}`,
						),
					),
				),
			);
		});
	});
	return section(
		"Generate invoices for a period",
		h(
			"p",
			{ class: "muted" },
			"Bills every subscription active in the period that has not been billed yet, and bills late usage as supplementary invoices. Running it twice never bills twice.",
		),
		form,
		result,
	);
}
