/**
 * Rating a billing period split by plan changes "now" (docs/plan-versions.md#changing-now). Each part is billed as
 * a subscription active only during that part would be: its usage rated on its own by its plan's charges (tiers
 * and included quantities count from zero in each part), and its base fee prorated by its seconds of the period,
 * whatever the plan's `prorate` says — a base-fee line for every part, also when it rounds to 0. Every line names
 * its part: "Base fee (1–15 Nov, Growth v1)". The minimum is the last part's plan's, on the whole period; the
 * discount is computed on the whole period. Lines carry their part's first instant (`part`), so that later
 * invoices of the period compare what they bill per metric and per part.
 */
import { proratedBaseFee } from "../billing-period/proration";
import { convertAmount } from "../exchange-rates/convert";
import { Decimal } from "../lib/decimal";
import { roundMoney } from "../lib/money";
import { DISCOUNT_METRIC, discountCharge, discountDescription } from "../pricing/period-discount";
import { quantitiesForPlan } from "../pricing/quantities";
import { BASE_FEE_METRIC, MINIMUM_METRIC, rateUsage } from "../pricing/rate";
import { ratePlanPricing } from "../pricing/rate-plans";
import { labelOf, type MeteredLine, type SubscriptionPeriodState, sharesByMetric } from "./computed";
import type { PeriodPart } from "./period-parts";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "1–15 Nov, Growth v1": the days the part covers (its last instant's day included) and its plan. */
export function partLabel(part: Pick<PeriodPart, "startsAt" | "endsAt" | "plan">): string {
	const first = new Date(part.startsAt);
	const last = new Date(Date.parse(part.endsAt) - 1);
	const month = (d: Date) => MONTHS[d.getUTCMonth()] as string;
	const from = first.getUTCDate();
	const to = last.getUTCDate();
	const days =
		first.getUTCMonth() !== last.getUTCMonth()
			? `${from} ${month(first)}–${to} ${month(last)}`
			: from === to
				? `${from} ${month(last)}`
				: `${from}–${to} ${month(last)}`;
	return `${days}, ${part.plan.name} v${part.plan.version ?? 1}`;
}

/** One part's lines, in its plan's currency: its base fee, then each of its charges. */
function partLines(part: PeriodPart): MeteredLine[] {
	const pricing = { ...ratePlanPricing(part.plan), base_fee: "0", minimum_amount: "0" };
	const quantities = quantitiesForPlan(pricing.charges, part.usage, part.metrics);
	const shares = sharesByMetric(pricing.charges, part.usage, part.metrics);
	const label = partLabel(part);
	const charges = new Map(pricing.charges.map((charge) => [charge.metric, charge]));
	const fee = roundMoney(Decimal.from(part.plan.baseFee), pricing.currency);
	const lines: MeteredLine[] = [
		{
			metric: BASE_FEE_METRIC,
			charge: null,
			quantity: Decimal.ONE,
			amount: proratedBaseFee(fee, part.proration, pricing.currency),
			shares: null,
			baseFeeDescription: `Base fee (${label})`,
			part: part.startsAt,
		},
	];
	for (const rated of rateUsage(pricing, quantities).charges) {
		const charge = charges.get(rated.metric);
		if (!charge) continue;
		lines.push({
			metric: rated.metric,
			// The part named where the charge's label goes, so every description of the line says which part.
			charge: { ...charge, description: `${labelOf(charge)} (${label})` },
			quantity: rated.quantity,
			amount: rated.amount,
			shares: shares.get(rated.metric) ?? new Map(),
			part: part.startsAt,
		});
	}
	return lines;
}

/** The lines of a split period: every part's, then the minimum's top-up and the discount of the whole period. */
export function rateTheParts(state: SubscriptionPeriodState, parts: readonly PeriodPart[]): MeteredLine[] {
	const conversion = state.conversion ?? null;
	const lines = parts.flatMap(partLines).map((line) =>
		// Converted per line, as a period of one part (docs/currencies.md).
		conversion === null
			? line
			: { ...line, originalAmount: line.amount, amount: convertAmount(line.amount, conversion) },
	);
	const currency = conversion?.to ?? state.plan.currency;
	const subtotal = Decimal.sum(lines.map((line) => line.amount));
	const last = parts[parts.length - 1] as PeriodPart;
	const planMinimum = roundMoney(Decimal.from(last.plan.minimumAmount), last.plan.currency);
	const minimum = conversion === null ? planMinimum : convertAmount(planMinimum, conversion);
	if (subtotal.lt(minimum)) {
		lines.push({
			metric: MINIMUM_METRIC,
			charge: null,
			quantity: Decimal.ONE,
			amount: minimum.sub(subtotal),
			shares: null,
		});
	}
	const discount = state.discount ?? null;
	if (discount !== null) {
		const total = Decimal.sum(lines.map((line) => line.amount));
		const line = discountCharge(discount, { currency, charges: [], total });
		lines.push({
			metric: DISCOUNT_METRIC,
			charge: null,
			quantity: Decimal.ONE,
			amount: line.amount,
			shares: null,
			label: discountDescription(discount),
		});
	}
	return lines;
}
