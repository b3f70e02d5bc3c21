/**
 * Applying a subscription's negotiated prices to its plan (price-overrides.ts defines and checks them). Apart from
 * the zod schemas there, so that what rates events (the accumulator) does not build them when a new isolate
 * starts (docs/scaling.md#cold-start).
 */
import type { Charge } from "./charges";
import type { PriceOverride } from "./price-overrides";

/** The charge as the subscription prices it: the plan's metric, description and source, the override's price. */
export function overriddenCharge(charge: Charge, override: PriceOverride): Charge {
	const merged: Record<string, unknown> = {
		...override,
		metric: charge.metric,
		source: charge.source,
		included_quantity: override.included_quantity ?? charge.included_quantity,
	};
	if (charge.description !== undefined) merged.description = charge.description;
	if (merged.included_quantity === undefined) delete merged.included_quantity;
	return merged as Charge;
}

/** The plan's charges with the overrides applied; the plan itself when there are none. */
export function effectiveCharges(
	charges: readonly Charge[],
	overrides: readonly PriceOverride[] | null | undefined,
): Charge[] {
	if (!overrides || overrides.length === 0) return charges as Charge[];
	const byMetric = new Map(overrides.map((override) => [override.metric, override]));
	return charges.map((charge) => {
		const override = byMetric.get(charge.metric);
		return override ? overriddenCharge(charge, override) : charge;
	});
}

/** A plan (a stored row or what rating needs) as the subscription's overrides price it. */
export function effectivePlan<P extends { charges: unknown }>(
	plan: P,
	overrides: readonly PriceOverride[] | null | undefined,
): P {
	if (!overrides || overrides.length === 0) return plan;
	return { ...plan, charges: effectiveCharges(plan.charges as Charge[], overrides) };
}
