import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allocate, Decimal } from "../../src/lib/decimal";
import { minorUnits } from "../../src/lib/money";
import { rateTiered } from "../../src/pricing/models/tiered";
import { Charge, RatePlanInput } from "../../src/pricing/plan";
import { quantitiesForPlan, type UsageAggregate } from "../../src/pricing/quantities";
import { type RatedUsage, rateCharge, rateUsage } from "../../src/pricing/rate";

// ---- arbitraries -------------------------------------------------------------------------------------------

const decimal = (maxUnits: bigint, maxScale: number) =>
	fc
		.tuple(fc.bigInt({ min: 0n, max: maxUnits }), fc.integer({ min: 0, max: maxScale }))
		.map(([units, scale]) => Decimal.fromUnits(units, scale));

/** A price as a JSON number with at most 12 decimals (≤ 10 significant digits, so the number is exact). */
const price = decimal(10_000_000_000n, 12).map((p) => p.toNumber());
const quantity = decimal(10n ** 12n, 6);
const currency = fc.constantFrom("USD", "EUR", "JPY", "KRW", "KWD", "BHD", "CLP");

const tiers = fc
	.array(
		fc.record({
			gap: decimal(1_000_000n, 2),
			unit_price: price,
			flat_fee: fc.option(price, { nil: undefined }),
		}),
		{
			minLength: 1,
			maxLength: 5,
		},
	)
	.map((list) => {
		let bound = Decimal.ZERO;
		return list.map(({ gap, unit_price, flat_fee }, i) => {
			bound = bound.add(gap).add(Decimal.ONE); // strictly increasing and > 0
			const up_to = i === list.length - 1 ? null : bound.toNumber();
			return flat_fee === undefined ? { up_to, unit_price } : { up_to, unit_price, flat_fee };
		});
	});

const sources = {
	calls: { kind: "action", type: "llm.call", aggregate: "count" },
	tokens: { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" },
	deals: { kind: "outcome", type: "deal.closed", aggregate: "count" },
	dealValue: { kind: "outcome", type: "deal.closed", aggregate: "sum" },
	llmCost: { kind: "action", type: "llm.call", aggregate: "cost" },
} as const;

const model = fc.oneof(
	fc.record({ model: fc.constant("per_unit"), unit_price: price }),
	fc.record({
		model: fc.constant("package"),
		package_size: decimal(10_000n, 2).map((size) => size.add(Decimal.ONE).toNumber()),
		package_price: price,
	}),
	fc.record({ model: fc.constant("tiered"), tiers }),
	fc.record({ model: fc.constant("volume"), tiers }),
	fc.record({
		model: fc.constant("percentage"),
		percent: decimal(10_000n, 2).map((p) => Math.min(p.toNumber(), 100)),
	}),
	fc.record({
		model: fc.constant("cost_plus"),
		markup_percent: decimal(1_000_000n, 2).map((p) => Math.min(p.toNumber(), 10_000)),
	}),
);

const plan = fc
	.record({
		currency,
		base_fee: price,
		charges: fc.array(
			fc.record({
				source: fc.constantFrom(...Object.values(sources)),
				model,
				included_quantity: fc.option(
					decimal(100_000n, 3).map((q) => q.toNumber()),
					{ nil: undefined },
				),
			}),
			{ maxLength: 6 },
		),
	})
	.map(({ currency, base_fee, charges }) =>
		RatePlanInput.parse({
			name: "Generated",
			currency,
			base_fee,
			charges: charges.map(({ source, model, included_quantity }, i) => ({
				metric: `metric_${i}`,
				// percentage is only valid on sums of outcome values
				// cost_plus only on the cost of actions
				source:
					model.model === "percentage"
						? sources.dealValue
						: model.model === "cost_plus"
							? sources.llmCost
							: source,
				...model,
				...(included_quantity === undefined ? {} : { included_quantity }),
			})),
		}),
	);

/** Aggregates as the store would hold them: one row per kind, type and field (plus rows no charge reads). */
const wholeAggregates = fc
	.record({
		calls: fc.nat(1_000_000),
		tokenCount: fc.nat(1_000_000),
		tokens: decimal(10n ** 12n, 4),
		deals: fc.nat(10_000),
		dealValue: decimal(10n ** 12n, 6),
		noise: decimal(10n ** 9n, 2),
	})
	.map((a): UsageAggregate[] => [
		{ kind: "action", type: "llm.call", field: "", count: a.calls, sum: "0" },
		{ kind: "action", type: "llm.call", field: "tokens", count: a.tokenCount, sum: a.tokens.toString() },
		{ kind: "outcome", type: "deal.closed", field: "", count: a.deals, sum: a.dealValue.toString() },
		{ kind: "action", type: "llm.call", field: "cost", count: a.calls, sum: a.noise.toString() },
		{ kind: "outcome", type: "deal.lost", field: "", count: a.deals, sum: a.noise.toString() },
	]);

/** Splits every row into parts (as if per instance or per day) whose counts and sums add up exactly. */
function splitRows(rows: UsageAggregate[], weights: Decimal[]): UsageAggregate[] {
	return rows.flatMap((row) => {
		const sum = Decimal.from(row.sum);
		const counts = allocate(Decimal.from(row.count), weights, 0);
		const sums = allocate(sum, weights, sum.scale);
		return counts.map((count, i) => ({ ...row, count: count.toNumber(), sum: String(sums[i]) }));
	});
}

const asStrings = (result: RatedUsage) =>
	result.charges.map((line) => [line.metric, line.quantity.toString(), line.amount.toString()]);

// ---- properties --------------------------------------------------------------------------------------------

describe("graduated pricing", () => {
	it("never costs less for more", () => {
		fc.assert(
			fc.property(tiers, quantity, quantity, (tierList, a, b) => {
				const [low, high] = a.lte(b) ? [a, b] : [b, a];
				expect(
					rateTiered({ tiers: tierList }, low).amount.lte(rateTiered({ tiers: tierList }, high).amount),
				).toBe(true);
			}),
		);
	});

	it("with a single tier is per_unit pricing", () => {
		fc.assert(
			fc.property(price, quantity, currency, (unit_price, q, code) => {
				const source = sources.tokens;
				const graduated = Charge.parse({
					metric: "m",
					source,
					model: "tiered",
					tiers: [{ up_to: null, unit_price }],
				});
				const perUnit = Charge.parse({ metric: "m", source, model: "per_unit", unit_price });
				expect(rateCharge(graduated, q, code).amount.toString()).toBe(
					rateCharge(perUnit, q, code).amount.toString(),
				);
			}),
		);
	});
});

describe("rateUsage", () => {
	it("totals exactly the sum of its lines", () => {
		fc.assert(
			fc.property(plan, wholeAggregates, (ratePlan, aggregates) => {
				const result = rateUsage(ratePlan, quantitiesForPlan(ratePlan.charges, aggregates));
				expect(result.total.toString()).toBe(
					Decimal.sum(result.charges.map((line) => line.amount)).toString(),
				);
			}),
		);
	});

	it("never gives an amount more decimals than the currency has", () => {
		fc.assert(
			fc.property(plan, wholeAggregates, (ratePlan, aggregates) => {
				const result = rateUsage(ratePlan, quantitiesForPlan(ratePlan.charges, aggregates));
				const places = minorUnits(ratePlan.currency);
				for (const line of result.charges) expect(line.amount.scale).toBeLessThanOrEqual(places);
				expect(result.total.scale).toBeLessThanOrEqual(places);
			}),
		);
	});

	it("rates split usage exactly as the summed usage", () => {
		const weights = fc.array(decimal(100n, 1), { minLength: 1, maxLength: 5 });
		fc.assert(
			fc.property(plan, wholeAggregates, weights, (ratePlan, whole, parts) => {
				// The summed usage, read straight from the whole rows (one row per source).
				const rowOf = (kind: string, field: string) =>
					whole.find((r) => r.kind === kind && r.field === field);
				const summed = new Map(
					ratePlan.charges.map((charge) => {
						const { kind, aggregate } = charge.source;
						const row = rowOf(kind, kind === "action" && aggregate === "sum" ? "tokens" : "");
						return [charge.metric, Decimal.from(aggregate === "count" ? (row?.count ?? 0) : (row?.sum ?? 0))];
					}),
				);
				const fromParts = quantitiesForPlan(ratePlan.charges, splitRows(whole, parts));
				expect(asStrings(rateUsage(ratePlan, fromParts))).toEqual(asStrings(rateUsage(ratePlan, summed)));
			}),
		);
	});
});

describe("allocate", () => {
	const weights = fc.array(decimal(1_000_000n, 3), { minLength: 1, maxLength: 10 });
	const amountAndScale = fc.integer({ min: 0, max: 4 }).chain((scale) =>
		fc.tuple(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.constant(scale)).map(([units, s]) => ({
			amount: Decimal.fromUnits(units, s),
			scale: s,
		})),
	);

	it("returns parts that sum exactly to the amount, each within one unit of its exact share", () => {
		fc.assert(
			fc.property(amountAndScale, weights, ({ amount, scale }, weightList) => {
				const parts = allocate(amount, weightList, scale);
				expect(parts).toHaveLength(weightList.length);
				expect(Decimal.sum(parts).toString()).toBe(amount.toString());
				const totalWeight = Decimal.sum(weightList);
				if (totalWeight.isZero()) return;
				const unit = Decimal.fromUnits(1n, scale);
				parts.forEach((part, i) => {
					expect(part.scale).toBeLessThanOrEqual(scale);
					// |part − amount × w / W| < unit, multiplied through by W to stay exact
					const error = part.mul(totalWeight).sub(amount.mul(weightList[i] ?? Decimal.ZERO));
					const magnitude = error.isNegative() ? error.negate() : error;
					expect(magnitude.lt(unit.mul(totalWeight))).toBe(true);
				});
			}),
		);
	});
});
