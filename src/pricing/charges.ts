/**
 * A rate plan: a base fee plus charges, each turning one metered quantity into money by one pricing model.
 * The charge is a tagged union on `model`; every object is strict, so fields of another model are rejected.
 */
import { z } from "@hono/zod-openapi";
import type { Decimal } from "../lib/decimal";
import { DEFAULT_CURRENCY, isCurrencyCode } from "../lib/money";
import { boundedNumber, decimalInput, moneyInput } from "../schemas/numbers";

const Price = moneyInput();

const Quantity = boundedNumber().min(0);

const FilterValue = z.string().min(1).max(200);

/**
 * Metadata values an event must carry to count for the charge: for every key, that value or one of the listed
 * values. Metadata numbers and booleans match their JSON text ("true", "4"), so a filter is always strings.
 */
export const ChargeFilter = z
	.record(z.string().min(1).max(100), z.union([FilterValue, z.array(FilterValue).min(1).max(100)]))
	.refine((filter) => {
		const keys = Object.keys(filter).length;
		return keys >= 1 && keys <= 5;
	}, "must have 1–5 metadata keys")
	.openapi({
		description:
			"Only events whose metadata has, for every key, this value (or one of these values) count for the charge.",
		example: { model: ["gpt-4o", "gpt-4o-2024-08-06"] },
	});
export type ChargeFilter = z.infer<typeof ChargeFilter>;

export const ChargeSource = z.strictObject({
	kind: z.enum(["action", "outcome"]),
	type: z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, "must be 1–100 characters of A-Z a-z 0-9 . _ : -"),
	aggregate: z.enum(["count", "sum", "max", "unique_count", "cost"]),
	field: z.string().min(1).max(100).optional(),
	filter: ChargeFilter.optional(),
});
export type ChargeSource = z.infer<typeof ChargeSource>;

export const Tier = z.strictObject({
	up_to: boundedNumber().positive().nullable(),
	unit_price: Price,
	flat_fee: Price.optional(),
});
export type Tier = z.infer<typeof Tier>;

const Tiers = z
	.array(Tier)
	.min(1)
	.max(100)
	.superRefine((tiers, ctx) => {
		tiers.forEach((tier, i) => {
			const isLast = i === tiers.length - 1;
			const previous = tiers[i - 1]?.up_to;
			if (tier.up_to === null && !isLast) {
				ctx.addIssue({
					code: "custom",
					path: [i, "up_to"],
					message: "only the last tier may have up_to null",
				});
			} else if (tier.up_to !== null && isLast) {
				ctx.addIssue({ code: "custom", path: [i, "up_to"], message: "the last tier must have up_to null" });
			}
			if (tier.up_to !== null && previous != null && tier.up_to <= previous) {
				ctx.addIssue({
					code: "custom",
					path: [i, "up_to"],
					message: "up_to must be greater than the previous tier's up_to",
				});
			}
		});
	});

const chargeFields = {
	metric: z.string().regex(/^[a-z0-9_]{1,64}$/, "must be 1–64 characters of a-z 0-9 _"),
	description: z.string().max(2000).optional(),
	source: ChargeSource,
	included_quantity: Quantity.optional(),
};

export const PerUnitCharge = z.strictObject({
	...chargeFields,
	model: z.literal("per_unit"),
	unit_price: Price,
});
export const PackageCharge = z.strictObject({
	...chargeFields,
	model: z.literal("package"),
	package_size: decimalInput().positive(),
	package_price: Price,
});
export const TieredCharge = z.strictObject({ ...chargeFields, model: z.literal("tiered"), tiers: Tiers });
export const VolumeCharge = z.strictObject({ ...chargeFields, model: z.literal("volume"), tiers: Tiers });
export const PercentageCharge = z.strictObject({
	...chargeFields,
	model: z.literal("percentage"),
	percent: Price.max(100),
});
/** A markup on cost: the quantity is an amount of cost (source aggregate "cost"), billed with the markup on top. */
export const CostPlusCharge = z.strictObject({
	...chargeFields,
	model: z.literal("cost_plus"),
	markup_percent: decimalInput().max(10_000, "must be at most 10000"),
});
export type PerUnitCharge = z.infer<typeof PerUnitCharge>;
export type PackageCharge = z.infer<typeof PackageCharge>;
export type TieredCharge = z.infer<typeof TieredCharge>;
export type VolumeCharge = z.infer<typeof VolumeCharge>;
export type PercentageCharge = z.infer<typeof PercentageCharge>;
export type CostPlusCharge = z.infer<typeof CostPlusCharge>;

export const Charge = z
	.discriminatedUnion("model", [
		PerUnitCharge,
		PackageCharge,
		TieredCharge,
		VolumeCharge,
		PercentageCharge,
		CostPlusCharge,
	])
	.superRefine((charge, ctx) => {
		const { kind, aggregate, field } = charge.source;
		if (charge.metric === "base_fee") {
			ctx.addIssue({ code: "custom", path: ["metric"], message: '"base_fee" is reserved for the base fee' });
		}
		if (charge.metric === "minimum_commitment") {
			ctx.addIssue({
				code: "custom",
				path: ["metric"],
				message: '"minimum_commitment" is reserved for the minimum commitment top-up',
			});
		}
		// Metrics are keys of usage objects, where JSON's "__proto__" would set a prototype instead of a key.
		if (charge.metric === "__proto__") {
			ctx.addIssue({ code: "custom", path: ["metric"], message: '"__proto__" cannot be a metric name' });
		}
		if (aggregate === "count" && field !== undefined) {
			ctx.addIssue({ code: "custom", path: ["source", "field"], message: "field is not allowed for counts" });
		}
		if (aggregate === "sum" && kind === "action" && field === undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message: "field is required to sum actions: the numeric metadata field to add",
			});
		}
		if (aggregate === "sum" && kind === "outcome" && field !== undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message: "field is not allowed for outcome sums: they add the outcome values",
			});
		}
		if (aggregate === "max" && kind === "action" && field === undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message: "field is required for the max of actions: the numeric metadata field to compare",
			});
		}
		if (aggregate === "max" && kind === "outcome" && field !== undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message: "field is not allowed for the max of outcomes: it compares the outcome values",
			});
		}
		if (aggregate === "unique_count" && field === undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message: "field is required for unique_count: the metadata field whose distinct values are counted",
			});
		}
		if (aggregate === "cost" && kind !== "action") {
			ctx.addIssue({
				code: "custom",
				path: ["source", "aggregate"],
				message: "cost applies only to actions: it sums what their LLM calls cost",
			});
		}
		if (aggregate === "cost" && field !== undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["source", "field"],
				message:
					"field is not allowed for cost: it sums each action's cost (metadata cost, or its model's price)",
			});
		}
		if (charge.model === "cost_plus" && aggregate !== "cost") {
			ctx.addIssue({
				code: "custom",
				path: ["model"],
				message: "cost_plus applies only to the cost of actions (source aggregate cost)",
			});
		}
		if (charge.model === "percentage" && !(kind === "outcome" && aggregate === "sum")) {
			ctx.addIssue({
				code: "custom",
				path: ["model"],
				message: "percentage applies only to sums of outcome values (source kind outcome, aggregate sum)",
			});
		}
	});
export type Charge = z.infer<typeof Charge>;
export type ChargeModel = Charge["model"];

export const RatePlanInput = z
	.strictObject({
		name: z
			.string()
			.min(1)
			.max(200)
			// An empty name is already reported by min(1); report only names of nothing but spaces here.
			.refine((s) => s.length === 0 || s.trim().length > 0, "must not be blank"),
		description: z.string().max(2000).nullable().default(null),
		currency: z
			.string()
			.refine(isCurrencyCode, "must be an ISO 4217 currency code in upper case")
			.default(DEFAULT_CURRENCY),
		base_fee: Price.default(0),
		minimum_amount: Price.default(0),
		prorate: z.boolean().default(false),
		charges: z.array(Charge).max(50),
	})
	.superRefine((plan, ctx) => {
		const seen = new Set<string>();
		plan.charges.forEach((charge, i) => {
			if (seen.has(charge.metric)) {
				ctx.addIssue({
					code: "custom",
					path: ["charges", i, "metric"],
					message: `metric "${charge.metric}" is already used by another charge`,
				});
			}
			seen.add(charge.metric);
		});
	});
export type RatePlanInput = z.infer<typeof RatePlanInput>;

/** What rating needs from a plan, whether it comes from a request or from storage. */
export interface PlanPricing {
	currency: string;
	base_fee: number | string | Decimal;
	/** The least a period costs (docs/pricing.md#filters-aggregations-and-minimums); 0 or absent: no minimum. */
	minimum_amount?: number | string | Decimal;
	charges: readonly Charge[];
}
