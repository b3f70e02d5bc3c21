/**
 * The discount of one billing period and the invoice line it makes (docs/discounts.md#the-discount-line). A
 * subscription has at most one discount covering a period; its line comes after the minimum commitment's top-up
 * and before credits: percent_off of the other lines' sum, rounded once, or amount_off up to that sum. Rating
 * the whole period and comparing with what invoices billed (invoicing/computed.ts) makes a supplementary invoice
 * get only what the regular one left unused, so an amount off is granted at most once per period.
 */
import { getTableName, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { coupons, subscriptionDiscounts, subscriptions } from "../db/schema";
import { Decimal } from "../lib/decimal";
import { minorUnits, roundMoney } from "../lib/money";
import type { RatedCharge, RatedUsage } from "./rate";

export const DISCOUNT_METRIC = "discount";

/** What rating needs of the coupon behind a period's discount. */
export interface PeriodDiscount {
	code: string;
	/** Exact decimal strings; exactly one is set. */
	percentOff: string | null;
	amountOff: string | null;
	currency: string | null;
}

/**
 * The discount covering period P of the subscription of the query, as JSON text (null when none): the discount
 * whose start_period ≤ P ≤ end_period (or no end), newest first if ever two did.
 */
export function discountInEffect(period: string | SQLiteColumn) {
	// Spelled out: in a single-table query drizzle writes a bare "id", which here would mean the discount's.
	const subscriptionId = sql.raw(`"${getTableName(subscriptions)}"."id"`);
	return sql<string | null>`(
		SELECT json_object('code', c.code, 'percentOff', c.percent_off, 'amountOff', c.amount_off, 'currency', c.currency)
		FROM ${subscriptionDiscounts} AS d JOIN ${coupons} AS c ON c.id = d.coupon_id
		WHERE d.subscription_id = ${subscriptionId} AND d.start_period <= ${period}
			AND (d.end_period IS NULL OR d.end_period >= ${period})
		ORDER BY d.start_period DESC, d.id DESC LIMIT 1
	)`;
}

export function parseDiscount(json: string | null | undefined): PeriodDiscount | null {
	return json ? (JSON.parse(json) as PeriodDiscount) : null;
}

/** An amount written with exactly `places` decimals: 50 → "50.00". */
function fixed(amount: Decimal, places: number): string {
	const [whole, fraction = ""] = amount.roundHalfUp(places).toString().split(".");
	return places === 0 ? (whole as string) : `${whole}.${fraction.padEnd(places, "0")}`;
}

/** "SPRING (20% off)", "ACME50 (USD 50.00 off)". */
export function discountDescription(discount: PeriodDiscount): string {
	if (discount.percentOff !== null)
		return `${discount.code} (${Decimal.from(discount.percentOff).toString()}% off)`;
	const currency = discount.currency ?? "";
	const amount = fixed(Decimal.from(discount.amountOff ?? 0), minorUnits(currency));
	return `${discount.code} (${currency} ${amount} off)`;
}

/** The discount of a period whose other lines sum to `subtotal`: never more than the subtotal, never below 0. */
export function discountAmount(discount: PeriodDiscount, subtotal: Decimal, currency: string): Decimal {
	if (!subtotal.gt(Decimal.ZERO)) return Decimal.ZERO;
	const off =
		discount.percentOff !== null
			? roundMoney(subtotal.mulPercent(Decimal.from(discount.percentOff)), currency)
			: roundMoney(Decimal.from(discount.amountOff ?? 0), currency);
	return Decimal.min(off, subtotal);
}

/** The discount line of a rated period: quantity 1, a negative amount (0 when nothing is left to discount). */
export function discountCharge(discount: PeriodDiscount, rated: RatedUsage): RatedCharge {
	const amount = discountAmount(discount, rated.total, rated.currency);
	return {
		metric: DISCOUNT_METRIC,
		model: "flat",
		quantity: Decimal.ONE,
		billable_quantity: Decimal.ONE,
		amount: amount.isZero() ? Decimal.ZERO : amount.negate(),
	};
}

/** A rated period with its discount line last (after the minimum's top-up); unchanged without a discount. */
export function withDiscount(rated: RatedUsage, discount: PeriodDiscount | null): RatedUsage {
	if (discount === null) return rated;
	const line = discountCharge(discount, rated);
	return { ...rated, charges: [...rated.charges, line], total: rated.total.add(line.amount) };
}
