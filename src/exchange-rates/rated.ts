/**
 * A period rated in its plan's currency, converted to the billing currency line by line (docs/currencies.md):
 * each line, already rounded in the plan's currency, is converted and rounded again; the plan's minimum is
 * converted like a line, and its top-up computed in the billing currency from the converted lines.
 */
import { Decimal } from "../lib/decimal";
import { roundMoney } from "../lib/money";
import type { PlanPricing } from "../pricing/charges";
import { MINIMUM_METRIC, type RatedUsage } from "../pricing/rate";
import { type Conversion, convertAmount } from "./convert";

export interface ConvertedRating {
	/** The period in the billing currency (no discount yet: it is computed on the converted lines). */
	rated: RatedUsage;
	/** Each converted line's amount in the plan's currency, by metric; lines computed in the billing currency have none. */
	originals: Map<string, Decimal>;
}

export function convertRated(
	rated: RatedUsage,
	pricing: PlanPricing,
	conversion: Conversion,
): ConvertedRating {
	const originals = new Map<string, Decimal>();
	const charges = rated.charges
		.filter((line) => line.metric !== MINIMUM_METRIC)
		.map((line) => {
			originals.set(line.metric, line.amount);
			return { ...line, amount: convertAmount(line.amount, conversion) };
		});
	const subtotal = Decimal.sum(charges.map((line) => line.amount));
	const minimum = convertAmount(
		roundMoney(Decimal.from(pricing.minimum_amount ?? 0), rated.currency),
		conversion,
	);
	if (subtotal.lt(minimum)) {
		charges.push({
			metric: MINIMUM_METRIC,
			model: "flat",
			quantity: Decimal.ONE,
			billable_quantity: Decimal.ONE,
			amount: minimum.sub(subtotal),
		});
	}
	return {
		rated: { currency: conversion.to, charges, total: Decimal.sum(charges.map((line) => line.amount)) },
		originals,
	};
}
