/**
 * Line descriptions a customer can read on the invoice: what was metered, how much of it, and what was free.
 * "LLM tokens — 1,234,567 units (first 100,000 included)". Quantities are exact decimals, so grouping is done
 * on their digits, never through a float.
 */
import { Decimal } from "../lib/decimal";

export const BASE_FEE_DESCRIPTION = "Base fee";
export const MINIMUM_DESCRIPTION = "Minimum commitment top-up";

/** 1234567.5 → "1,234,567.5"; the digits stay exact. */
export function formatQuantity(quantity: Decimal): string {
	const text = quantity.toString();
	const sign = text.startsWith("-") ? "-" : "";
	const [whole = "0", fraction] = text.replace("-", "").split(".");
	const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	return `${sign}${grouped}${fraction ? `.${fraction}` : ""}`;
}

function unitsOf(quantity: Decimal): string {
	return `${formatQuantity(quantity)} ${quantity.eq(Decimal.ONE) ? "unit" : "units"}`;
}

function includedNote(included: Decimal): string {
	return included.isZero() ? "" : `first ${formatQuantity(included)} included`;
}

/** A usage line of a regular invoice: the period's whole quantity of the metric. */
export function usageLineDescription(label: string, quantity: Decimal, included: Decimal): string {
	const note = includedNote(included);
	return `${label} — ${unitsOf(quantity)}${note ? ` (${note})` : ""}`;
}

/**
 * A line of a supplementary invoice: usage that arrived after the period was first invoiced. It states the
 * extra units and the new total, since the amount is the price of the total minus what was already billed.
 * `since` says what the extra units are: late usage of a period that had ended when it was first invoiced, or
 * simply usage since the previous invoice of a period invoiced while still open.
 */
export function lateUsageLineDescription(
	label: string,
	extra: Decimal,
	total: Decimal,
	included: Decimal,
	since: "late" | "previous_invoice" = "late",
): string {
	const note = includedNote(included);
	const what = since === "late" ? "late usage" : "usage since the previous invoice";
	return `${label} — ${what}: ${unitsOf(extra)} (${formatQuantity(total)} in total${note ? `, ${note}` : ""})`;
}
