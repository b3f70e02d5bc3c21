/** How an invoice document writes money, quantities and dates: exact digits, English month names, UTC. */

import { formatQuantity } from "../invoicing/descriptions";
import { Decimal } from "../lib/decimal";
import { minorUnits } from "../lib/money";

const MONTHS = [
	"January",
	"February",
	"March",
	"April",
	"May",
	"June",
	"July",
	"August",
	"September",
	"October",
	"November",
	"December",
];

/** 1234.5 USD → "USD 1,234.50": the currency's own minor digits, grouped, never through a float's rounding. */
export function formatMoney(amount: number, currency: string): string {
	const digits = minorUnits(currency);
	const exact = Decimal.from(amount).roundHalfUp(digits);
	const negative = exact.isNegative();
	const text = (negative ? exact.negate() : exact).toString();
	const [whole = "0", fraction = ""] = text.split(".");
	const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	const cents = digits > 0 ? `.${fraction.padEnd(digits, "0")}` : "";
	return `${negative ? "-" : ""}${currency} ${grouped}${cents}`;
}

export function formatCount(quantity: number): string {
	return formatQuantity(Decimal.from(quantity));
}

/** "2026-11-22T10:00:00.000Z" → "November 22, 2026" (UTC). */
export function formatDate(iso: string): string {
	const date = new Date(iso);
	return `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}, ${date.getUTCFullYear()}`;
}

/** "2026-11" → "November 2026". */
export function formatPeriod(period: string): string {
	const [year, month] = period.split("-").map(Number) as [number, number];
	return `${MONTHS[month - 1]} ${year}`;
}
