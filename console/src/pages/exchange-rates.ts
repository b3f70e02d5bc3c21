/**
 * Exchange rates (docs/currencies.md): every rate, newest `effective_at` first and paged, and adding one (1 base =
 * rate quote from a given instant on, now when left empty). An invoice in another currency than its plan's
 * converts at the rate in effect when it is issued.
 */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, formValues, h } from "../dom";
import type { ExchangeRate, List } from "../types";
import { field, fillWhenReady, pager, runInto, section, table, when } from "../ui";

const PAGE = 20;

export async function exchangeRatesPage(ctx: PageContext): Promise<void> {
	const slot = h("div", { "data-exchange-rates": "" });
	const show = () => fillWhenReady(slot, ctx.signal, () => rateTable(ctx));
	fill(
		ctx.view,
		h("h1", null, "Exchange rates"),
		section("Rates, newest first", slot),
		ctx.identity.permission === "read-only" ? null : section("Add a rate", rateForm(ctx, show)),
	);
	await show();
}

async function rateTable(ctx: PageContext): Promise<Node> {
	const page = await ctx.api.get<List<"exchange_rates", ExchangeRate>>(
		"/exchange-rates",
		{ limit: PAGE, offset: pageOffset(ctx.query) },
		ctx.signal,
	);
	const rows = (page.exchange_rates ?? []).map((rate) => [
		h("code", { "data-exchange-rate": rate.id }, `${rate.base} → ${rate.quote}`),
		h("span", { class: "num" }, `1 ${rate.base} = ${rate.rate} ${rate.quote}`),
		when(rate.effective_at),
		when(rate.created_at),
	]);
	return h(
		"div",
		null,
		table(["pair", "rate", "effective from", "added"], rows, "No exchange rates yet."),
		pager(page, (next) => ctx.go(hashOf("/exchange-rates", { offset: next }))),
	);
}

function rateForm(ctx: PageContext, show: () => Promise<void>): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Add rate");
	const currency = (name: string, placeholder: string) =>
		h("input", { name, required: true, maxlength: 3, size: 4, placeholder, pattern: "[A-Za-z]{3}" });
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Add an exchange rate" },
		field("Base", currency("base", "USD")),
		field("Quote", currency("quote", "EUR")),
		field(
			"Rate (quote per 1 base)",
			h("input", { name: "rate", required: true, inputmode: "decimal", size: 10 }),
		),
		field("Effective from (UTC, empty: now)", h("input", { name: "effective_at", type: "datetime-local" })),
		button,
		result,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const body: Record<string, unknown> = {
				base: (values.base ?? "").toUpperCase(),
				quote: (values.quote ?? "").toUpperCase(),
				rate: Number((values.rate ?? "").trim()),
			};
			// A datetime-local value has no zone and may lack seconds; the form means UTC.
			const at = values.effective_at;
			if (at) body.effective_at = `${at}${at.length === 16 ? ":00" : ""}Z`;
			const rate = await ctx.api.post<ExchangeRate>("/exchange-rates", body);
			form.reset();
			await show();
			return h(
				"p",
				{ class: "ok" },
				`Added 1 ${rate.base} = ${rate.rate} ${rate.quote} from ${rate.effective_at.slice(0, 16)} UTC.`,
			);
		});
	});
	return form;
}
