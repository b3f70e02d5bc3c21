/**
 * Rating: metric quantities in, money out. Pure — no storage — so simulation, the usage endpoint and invoicing
 * all price usage the same way. Each model computes an exact, unrounded amount; the charge line is then rounded
 * once to the currency's minor unit (half away from zero), and the total is the sum of the rounded lines.
 */
import { Decimal } from "../lib/decimal";
import { roundMoney } from "../lib/money";
import type { Charge, ChargeModel, PlanPricing } from "./charges";
import { rateCostPlus } from "./models/cost-plus";
import { ratePackage } from "./models/package";
import { ratePerUnit } from "./models/per-unit";
import { ratePercentage } from "./models/percentage";
import { rateTiered } from "./models/tiered";
import { rateVolume } from "./models/volume";

export interface RatedTier {
	up_to: Decimal | null;
	quantity: Decimal;
	/** Exact, not rounded: only the line amount is rounded. */
	amount: Decimal;
}

export interface ModelResult {
	amount: Decimal;
	tiers?: RatedTier[];
}

export interface RatedCharge {
	metric: string;
	model: ChargeModel | "flat";
	quantity: Decimal;
	billable_quantity: Decimal;
	amount: Decimal;
	tiers?: RatedTier[];
}

export interface RatedUsage {
	currency: string;
	charges: RatedCharge[];
	total: Decimal;
}

export type MetricQuantities = ReadonlyMap<string, Decimal> | Readonly<Record<string, Decimal>>;

export const BASE_FEE_METRIC = "base_fee";
export const MINIMUM_METRIC = "minimum_commitment";

function applyModel(charge: Charge, billable: Decimal): ModelResult {
	switch (charge.model) {
		case "per_unit":
			return ratePerUnit(charge, billable);
		case "package":
			return ratePackage(charge, billable);
		case "tiered":
			return rateTiered(charge, billable);
		case "volume":
			return rateVolume(charge, billable);
		case "percentage":
			return ratePercentage(charge, billable);
		case "cost_plus":
			return rateCostPlus(charge, billable);
		default: {
			const unknownModel: never = charge;
			throw new Error(`Unknown pricing model: ${JSON.stringify(unknownModel)}`);
		}
	}
}

export function rateCharge(charge: Charge, quantity: Decimal, currency: string): RatedCharge {
	const included = Decimal.from(charge.included_quantity ?? 0);
	const billable = Decimal.max(Decimal.ZERO, quantity.sub(included));
	const { amount, tiers } = applyModel(charge, billable);
	const rated: RatedCharge = {
		metric: charge.metric,
		model: charge.model,
		quantity,
		billable_quantity: billable,
		amount: roundMoney(amount, currency),
	};
	if (tiers) rated.tiers = tiers;
	return rated;
}

function quantityOf(usage: MetricQuantities, metric: string): Decimal {
	if (usage instanceof Map) return usage.get(metric) ?? Decimal.ZERO;
	const record = usage as Readonly<Record<string, Decimal>>;
	// hasOwn, because metric names such as "constructor" are valid and must not read the prototype.
	return (Object.hasOwn(record, metric) ? record[metric] : undefined) ?? Decimal.ZERO;
}

/**
 * The top-up that brings a period's subtotal (base fee plus charges, each already rounded) up to the plan's
 * minimum; null when the subtotal already reaches it. The minimum is money, rounded like any line.
 */
export function minimumTopUp(plan: PlanPricing, subtotal: Decimal): RatedCharge | null {
	const minimum = roundMoney(Decimal.from(plan.minimum_amount ?? 0), plan.currency);
	if (!subtotal.lt(minimum)) return null;
	return {
		metric: MINIMUM_METRIC,
		model: "flat",
		quantity: Decimal.ONE,
		billable_quantity: Decimal.ONE,
		amount: minimum.sub(subtotal),
	};
}

/**
 * Prices a period's usage: the base fee first (when non-zero), then every charge in plan order, then the
 * minimum commitment's top-up when the rest falls short of the plan's minimum.
 */
export function rateUsage(plan: PlanPricing, usage: MetricQuantities): RatedUsage {
	const charges: RatedCharge[] = [];
	const baseFee = roundMoney(Decimal.from(plan.base_fee), plan.currency);
	if (!baseFee.isZero()) {
		charges.push({
			metric: BASE_FEE_METRIC,
			model: "flat",
			quantity: Decimal.ONE,
			billable_quantity: Decimal.ONE,
			amount: baseFee,
		});
	}
	for (const charge of plan.charges) {
		charges.push(rateCharge(charge, quantityOf(usage, charge.metric), plan.currency));
	}
	const topUp = minimumTopUp(plan, Decimal.sum(charges.map((line) => line.amount)));
	if (topUp) charges.push(topUp);
	return { currency: plan.currency, charges, total: Decimal.sum(charges.map((line) => line.amount)) };
}

export interface RatedTierJson {
	up_to: number | null;
	quantity: number;
	amount: number;
}

export interface RatedChargeJson {
	metric: string;
	model: ChargeModel | "flat";
	quantity: number;
	billable_quantity: number;
	amount: number;
	tiers?: RatedTierJson[];
}

export interface RatedUsageJson {
	currency: string;
	charges: RatedChargeJson[];
	total: number;
}

export function ratedChargeToJson(line: RatedCharge): RatedChargeJson {
	const json: RatedChargeJson = {
		metric: line.metric,
		model: line.model,
		quantity: line.quantity.toNumber(),
		billable_quantity: line.billable_quantity.toNumber(),
		amount: line.amount.toNumber(),
	};
	if (line.tiers) {
		json.tiers = line.tiers.map((tier) => ({
			up_to: tier.up_to === null ? null : tier.up_to.toNumber(),
			quantity: tier.quantity.toNumber(),
			amount: tier.amount.toNumber(),
		}));
	}
	return json;
}

export function ratedUsageToJson(result: RatedUsage): RatedUsageJson {
	return {
		currency: result.currency,
		charges: result.charges.map(ratedChargeToJson),
		total: result.total.toNumber(),
	};
}
