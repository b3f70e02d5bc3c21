/**
 * An account's invoices summed per currency (docs/currencies.md): an account may be billed in several currencies,
 * and amounts in different currencies are never added together. Sums are taken in whole minor units (cents), so
 * that adding amounts never drifts by a binary fraction.
 */
import { h } from "../dom";
import { money, shownDigits } from "../format";
import type { Invoice } from "../types";
import { table } from "../ui";

interface Totals {
	billed: number;
	open: number;
	count: number;
}

/** Billed (every invoice but void ones) and still open, in minor units, one entry per currency. */
function totalsOf(invoices: Invoice[]): Map<string, Totals> {
	const totals = new Map<string, Totals>();
	for (const invoice of invoices) {
		if (invoice.status === "void") continue;
		const scale = 10 ** shownDigits(invoice.currency);
		const minor = Math.round(invoice.amount * scale);
		const row = totals.get(invoice.currency) ?? { billed: 0, open: 0, count: 0 };
		row.billed += minor;
		if (invoice.status === "open") row.open += minor;
		row.count += 1;
		totals.set(invoice.currency, row);
	}
	return totals;
}

/** One row per currency of the invoices shown; null when they are all void or there are none. */
export function totalsByCurrency(invoices: Invoice[]): HTMLElement | null {
	const totals = totalsOf(invoices);
	if (totals.size === 0) return null;
	const rows = [...totals].map(([currency, t]) => {
		const scale = 10 ** shownDigits(currency);
		return [
			h("span", { "data-total-currency": currency }, currency),
			h("span", { class: "num" }, String(t.count)),
			h("span", { class: "num", "data-total-billed": currency }, money(t.billed / scale, currency)),
			h("span", { class: "num", "data-total-open": currency }, money(t.open / scale, currency)),
		];
	});
	return h(
		"div",
		{ "data-currency-totals": "" },
		h(
			"p",
			{ class: "muted" },
			"Totals of the invoices listed, per currency (never added across currencies):",
		),
		table(["currency", "invoices", "billed", "open"], rows),
	);
}
