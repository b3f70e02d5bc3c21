/**
 * Negotiated prices: a subscription may replace the pricing of some of its plan's metrics — the model, its
 * fields and, when given, the included quantity — while what feeds each metric (its source) stays the plan's.
 * Every place that rates a subscription applies its overrides with effectivePlan, so usage, upcoming and issued
 * invoices, revenue and alerts all price the same period the same way (docs/discounts.md#negotiated-prices).
 */
import { z } from "@hono/zod-openapi";
import type { ErrorDetail } from "../lib/errors";
import {
	Charge,
	CostPlusCharge,
	PackageCharge,
	PercentageCharge,
	PerUnitCharge,
	TieredCharge,
	VolumeCharge,
} from "./charges";
import { overriddenCharge } from "./effective-plan";

const withoutSource = { description: true, source: true } as const;

export const PriceOverride = z
	.discriminatedUnion("model", [
		PerUnitCharge.omit(withoutSource),
		PackageCharge.omit(withoutSource),
		TieredCharge.omit(withoutSource),
		VolumeCharge.omit(withoutSource),
		PercentageCharge.omit(withoutSource),
		CostPlusCharge.omit(withoutSource),
	])
	.openapi("PriceOverride", {
		description:
			"Replaces the pricing of one metric of the plan for this subscription: the model and its fields, and " +
			"included_quantity when given (else the plan's). The metric's source stays the plan's.",
		example: { metric: "tokens", model: "per_unit", unit_price: 0.000008 },
	});
export type PriceOverride = z.infer<typeof PriceOverride>;

export { effectiveCharges, effectivePlan } from "./effective-plan";

export const PriceOverrides = z
	.array(PriceOverride)
	.max(50)
	.superRefine((overrides, ctx) => {
		const seen = new Set<string>();
		overrides.forEach((override, i) => {
			if (seen.has(override.metric)) {
				ctx.addIssue({
					code: "custom",
					path: [i, "metric"],
					message: `metric "${override.metric}" is overridden twice`,
				});
			}
			seen.add(override.metric);
		});
	});

/**
 * What is wrong with overrides for a plan's charges, as validation details under `path`: a metric the plan does
 * not have, or a model its source cannot feed (percentage only for outcome sums, cost_plus only for costs).
 */
export function overrideErrors(
	charges: readonly Charge[],
	overrides: readonly PriceOverride[],
	path = "price_overrides",
): ErrorDetail[] {
	const plan = new Map(charges.map((charge) => [charge.metric, charge]));
	const errors: ErrorDetail[] = [];
	overrides.forEach((override, i) => {
		const charge = plan.get(override.metric);
		if (!charge) {
			const known = [...plan.keys()].join(", ") || "none";
			errors.push({
				path: `${path}[${i}].metric`,
				message: `"${override.metric}" is not a metric of the rate plan (its metrics: ${known})`,
			});
			return;
		}
		const checked = Charge.safeParse(overriddenCharge(charge, override));
		if (!checked.success) {
			for (const issue of checked.error.issues) {
				const field = issue.path.filter((part) => part !== "source").join(".") || "model";
				errors.push({ path: `${path}[${i}].${field}`, message: issue.message });
			}
		}
	});
	return errors;
}
