/**
 * Proration of the base fee (docs/billing.md#subscription-lifecycle). A plan with `prorate: true` bills its base fee in proportion to the
 * seconds a subscription was active in the period — it started after the period began, or was cancelled before
 * it ended — rounded half-up to the currency's minor unit (docs/conventions.md#money), like every line. Plans without it (the default,
 * v1) bill the whole fee for any part of a period. Invoices, real-time usage and upcoming invoices all rate the
 * base fee through here, so they agree to the unit.
 */
import { Decimal } from "../lib/decimal";
import { minorUnits } from "../lib/money";
import type { PlanPricing } from "../pricing/charges";
import { BASE_FEE_METRIC, type MetricQuantities, type RatedUsage, rateUsage } from "../pricing/rate";
import { activeSpan, type SubscriptionLifetime } from "./activity";
import type { PeriodWindow } from "./period";

const SECOND_MS = 1000;
const DAY_SECONDS = 86_400;

export interface BaseFeeProration {
	activeSeconds: number;
	periodSeconds: number;
}

/**
 * The share of the period to bill, or null when the whole base fee is due: the plan does not prorate, or the
 * subscription was active all period. A subscription never active in the period has 0 active seconds.
 */
export function baseFeeProration(
	prorate: boolean,
	window: Pick<PeriodWindow, "start" | "end">,
	lifetime: SubscriptionLifetime,
): BaseFeeProration | null {
	if (!prorate) return null;
	const periodSeconds = Math.floor((Date.parse(window.end) - Date.parse(window.start)) / SECOND_MS);
	const span = activeSpan(window, lifetime);
	const activeSeconds = span === null ? 0 : Math.floor((span.to - span.from) / SECOND_MS);
	return activeSeconds >= periodSeconds ? null : { activeSeconds, periodSeconds };
}

/** base fee × active / period, rounded half-up to the currency's minor unit. */
export function proratedBaseFee(baseFee: Decimal, proration: BaseFeeProration, currency: string): Decimal {
	return baseFee
		.mul(Decimal.from(proration.activeSeconds))
		.divRoundHalfUp(Decimal.from(proration.periodSeconds), minorUnits(currency));
}

/** Whole days, rounded half-up: "Base fee (prorated 9 of 30 days)". */
export function proratedBaseFeeDescription(proration: BaseFeeProration): string {
	const days = (seconds: number) => Math.floor((seconds * 2 + DAY_SECONDS) / (2 * DAY_SECONDS));
	return `Base fee (prorated ${days(proration.activeSeconds)} of ${days(proration.periodSeconds)} days)`;
}

/**
 * Rates a period like rateUsage, with the base fee prorated when `proration` says so. The base fee line stays
 * even when its prorated amount rounds to 0, so the invoice says why nothing was charged for it.
 */
export function rateWithProration(
	pricing: PlanPricing,
	quantities: MetricQuantities,
	proration: BaseFeeProration | null,
): RatedUsage {
	const rated = rateUsage(pricing, quantities);
	if (proration === null) return rated;
	const fee = Decimal.from(pricing.base_fee);
	if (fee.isZero()) return rated;
	const amount = proratedBaseFee(fee, proration, pricing.currency);
	const charges = rated.charges.map((line) => (line.metric === BASE_FEE_METRIC ? { ...line, amount } : line));
	return { ...rated, charges, total: Decimal.sum(charges.map((line) => line.amount)) };
}
