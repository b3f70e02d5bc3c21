import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	type ComputedInvoice,
	computeInvoice,
	type SubscriptionPeriodState,
} from "../../src/invoicing/computed";
import { allocate, Decimal } from "../../src/lib/decimal";
import { minorUnits } from "../../src/lib/money";
import { Charge, RatePlanInput } from "../../src/pricing/charges";
import { rateTiered } from "../../src/pricing/models/tiered";
import { effectivePlan, PriceOverride } from "../../src/pricing/price-overrides";
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

// ---- negotiated prices and discounts, against an exact reference ---------------------------------------------

/** An exact rational, for a reference that shares no arithmetic with the engine. */
interface Rational {
	n: bigint;
	d: bigint;
}
const rational = (x: number | string | Decimal): Rational => {
	const text = Decimal.from(x).toString();
	const negative = text.startsWith("-");
	const [whole, fraction = ""] = (negative ? text.slice(1) : text).split(".");
	const n = BigInt(`${whole}${fraction}`) * (negative ? -1n : 1n);
	return { n, d: 10n ** BigInt(fraction.length) };
};
const R0: Rational = { n: 0n, d: 1n };
const radd = (a: Rational, b: Rational): Rational => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });
const rsub = (a: Rational, b: Rational): Rational => radd(a, { n: -b.n, d: b.d });
const rmul = (a: Rational, b: Rational): Rational => ({ n: a.n * b.n, d: a.d * b.d });
const rcmp = (a: Rational, b: Rational) => {
	const x = a.n * b.d - b.n * a.d;
	return x < 0n ? -1 : x > 0n ? 1 : 0;
};
const rmin = (a: Rational, b: Rational) => (rcmp(a, b) <= 0 ? a : b);
const rmax = (a: Rational, b: Rational) => (rcmp(a, b) >= 0 ? a : b);
/** Half away from zero to `places` decimals, as a decimal string. */
function rround(a: Rational, places: number): string {
	const scale = 10n ** BigInt(places);
	const negative = a.n < 0n;
	const n = (negative ? -a.n : a.n) * scale;
	let units = n / a.d;
	if ((n % a.d) * 2n >= a.d) units += 1n;
	return Decimal.fromUnits(negative ? -units : units, places).toString();
}
const rceil = (a: Rational): bigint => (a.n % a.d === 0n ? a.n / a.d : a.n / a.d + (a.n > 0n ? 1n : 0n));

/** A charge's exact amount, by the rules of docs/pricing.md, written independently of src/pricing/models. */
function referenceAmount(charge: Charge, quantity: Decimal): Rational {
	const billable = rmax(R0, rsub(rational(quantity), rational(charge.included_quantity ?? 0)));
	switch (charge.model) {
		case "per_unit":
			return rmul(billable, rational(charge.unit_price));
		case "package": {
			const size = rational(charge.package_size);
			return rmul(
				{ n: rceil({ n: billable.n * size.d, d: billable.d * size.n }), d: 1n },
				rational(charge.package_price),
			);
		}
		case "percentage":
			return rmul(billable, { n: rational(charge.percent).n, d: rational(charge.percent).d * 100n });
		case "cost_plus":
			return rmul(
				billable,
				radd({ n: 1n, d: 1n }, rmul(rational(charge.markup_percent), { n: 1n, d: 100n })),
			);
		case "tiered": {
			let lower = R0;
			let total = R0;
			for (const tier of charge.tiers) {
				const upper = tier.up_to === null ? billable : rmin(billable, rational(tier.up_to));
				if (rcmp(upper, lower) > 0) {
					total = radd(
						total,
						radd(rmul(rsub(upper, lower), rational(tier.unit_price)), rational(tier.flat_fee ?? 0)),
					);
				}
				if (tier.up_to !== null) lower = rational(tier.up_to);
			}
			return total;
		}
		case "volume": {
			if (billable.n === 0n) return R0;
			const tier = charge.tiers.find((t) => t.up_to === null || rcmp(billable, rational(t.up_to)) <= 0);
			return tier ? radd(rmul(billable, rational(tier.unit_price)), rational(tier.flat_fee ?? 0)) : R0;
		}
	}
}

interface Discount {
	code: string;
	percentOff: string | null;
	amountOff: string | null;
	currency: string | null;
}

/** The invoice of a whole period: base fee, charges, the minimum's top-up, then the discount; each line rounded. */
function referenceInvoice(
	pricing: { currency: string; base_fee: number; minimum_amount: number; charges: Charge[] },
	quantities: ReadonlyMap<string, Decimal>,
	discount: Discount | null,
): [string, string][] {
	const places = minorUnits(pricing.currency);
	const lines: [string, string][] = [];
	const baseFee = rround(rational(pricing.base_fee), places);
	if (!Decimal.from(baseFee).isZero()) lines.push(["base_fee", baseFee]);
	for (const charge of pricing.charges) {
		lines.push([
			charge.metric,
			rround(referenceAmount(charge, quantities.get(charge.metric) ?? Decimal.ZERO), places),
		]);
	}
	const subtotal = () => lines.reduce((sum, [, amount]) => radd(sum, rational(amount)), R0);
	const minimum = rational(rround(rational(pricing.minimum_amount), places));
	if (rcmp(subtotal(), minimum) < 0)
		lines.push(["minimum_commitment", rround(rsub(minimum, subtotal()), places)]);
	if (discount) {
		const before = subtotal();
		let off = R0;
		if (rcmp(before, R0) > 0) {
			off =
				discount.percentOff !== null
					? rational(
							rround(
								rmul(before, {
									n: rational(discount.percentOff).n,
									d: rational(discount.percentOff).d * 100n,
								}),
								places,
							),
						)
					: rational(rround(rational(discount.amountOff as string), places));
			off = rmin(off, before);
		}
		lines.push(["discount", rround({ n: -off.n, d: off.d }, places)]);
	}
	return lines;
}

const overrideModelFor = (charge: Charge) =>
	charge.model === "percentage" || charge.model === "cost_plus"
		? // the source feeds only this model: override its figure
			model.filter((m) => m.model === charge.model)
		: model.filter((m) => m.model !== "percentage" && m.model !== "cost_plus");

/** A plan with a minimum, and overrides for some of its metrics. */
const negotiated = fc.tuple(plan, fc.option(price, { nil: undefined })).chain(([ratePlan, minimum]) =>
	fc
		.tuple(
			...ratePlan.charges.map((charge) =>
				fc.option(
					fc.record({
						price: overrideModelFor(charge),
						included_quantity: fc.option(
							decimal(100_000n, 3).map((q) => q.toNumber()),
							{ nil: undefined },
						),
					}),
					{ nil: undefined },
				),
			),
		)
		.map((choices) => ({
			ratePlan: { ...ratePlan, minimum_amount: minimum ?? 0 },
			overrides: choices.flatMap((choice, i) =>
				choice === undefined
					? []
					: [
							PriceOverride.parse({
								metric: ratePlan.charges[i]?.metric,
								...choice.price,
								...(choice.included_quantity === undefined
									? {}
									: { included_quantity: choice.included_quantity }),
							}),
						],
			),
		})),
);

const discount = fc.option(
	fc.oneof(
		decimal(10_000n, 2)
			.filter((p) => p.gt(Decimal.ZERO) && p.lte(Decimal.from(100)))
			.map((p): Discount => ({ code: "PCT", percentOff: p.toString(), amountOff: null, currency: null })),
		decimal(10n ** 9n, 2)
			.filter((a) => a.gt(Decimal.ZERO))
			.map((a): Discount => ({ code: "AMT", percentOff: null, amountOff: a.toString(), currency: "USD" })),
	),
	{ nil: null },
);

function periodState(
	ratePlan: { currency: string; base_fee: number; minimum_amount: number; charges: Charge[] },
	usage: UsageAggregate[],
	discountOf: Discount | null,
	billed: ComputedInvoice | null = null,
): SubscriptionPeriodState {
	return {
		subscriptionId: "sub_property",
		accountId: "acct_property",
		plan: {
			id: "plan_property",
			environment: "live",
			name: "Generated",
			description: null,
			currency: ratePlan.currency,
			baseFee: String(ratePlan.base_fee),
			charges: ratePlan.charges,
			status: "active",
			minimumAmount: String(ratePlan.minimum_amount),
			createdAt: "2026-01-01T00:00:00.000Z",
			prorate: false,
		},
		usage: usage.map((row) => ({ ...row, agentId: null })),
		sequences: billed ? [billed.sequence] : [],
		billedLines: (billed?.lines ?? []).map((line) => ({
			metric: line.metric,
			quantity: line.quantity.toString(),
			amount: line.amount.toString(),
			agentShares: line.agentShares,
		})),
		invoiced: billed !== null,
		discount: discountOf,
	};
}

const linesOfDraft = (draft: ComputedInvoice | null) =>
	(draft?.lines ?? []).map((line) => [line.metric, line.amount.toString()]);

describe("negotiated prices and discounts", () => {
	it("an invoice equals the exact reference to the minor unit, and is never below zero", () => {
		fc.assert(
			fc.property(negotiated, wholeAggregates, discount, ({ ratePlan, overrides }, aggregates, off) => {
				const priced = effectivePlan(ratePlan, overrides);
				const draft = computeInvoice(periodState(priced, aggregates, off));
				const quantities = quantitiesForPlan(priced.charges, aggregates);
				const expected = referenceInvoice(priced, quantities, off);
				expect(linesOfDraft(draft)).toEqual(expected);
				const total = expected.reduce((sum, [, amount]) => sum.add(Decimal.from(amount)), Decimal.ZERO);
				expect(draft?.amount.toString()).toBe(total.toString());
				if (off !== null) expect(draft?.amount.isNegative()).toBe(false);
			}),
		);
	});

	it("an override with the plan's own price changes nothing", () => {
		fc.assert(
			fc.property(plan, wholeAggregates, discount, (ratePlan, aggregates, off) => {
				const samePrices = ratePlan.charges.map(({ source: _source, description: _d, ...price }) =>
					PriceOverride.parse(price),
				);
				const withPlan = { ...ratePlan, minimum_amount: 0 };
				const priced = effectivePlan(withPlan, samePrices);
				expect(priced.charges).toEqual(ratePlan.charges);
				expect(linesOfDraft(computeInvoice(periodState(priced, aggregates, off)))).toEqual(
					linesOfDraft(computeInvoice(periodState(withPlan, aggregates, off))),
				);
			}),
		);
	});

	it("a period billed in two invoices costs what one invoice of it costs: the discount is granted once", () => {
		fc.assert(
			fc.property(
				negotiated,
				wholeAggregates,
				wholeAggregates,
				discount,
				({ ratePlan, overrides }, early, late, off) => {
					const priced = effectivePlan(ratePlan, overrides);
					const regular = computeInvoice(periodState(priced, early, off));
					const supplementary = computeInvoice(periodState(priced, [...early, ...late], off, regular));
					const once = computeInvoice(periodState(priced, [...early, ...late], off));
					const billedTwice = (regular?.amount ?? Decimal.ZERO).add(supplementary?.amount ?? Decimal.ZERO);
					expect(billedTwice.toString()).toBe(once?.amount.toString());
				},
			),
		);
	});
});
