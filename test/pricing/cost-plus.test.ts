import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { minorUnits } from "../../src/lib/money";
import { Charge } from "../../src/pricing/charges";
import { rateCostPlus } from "../../src/pricing/models/cost-plus";
import { ratePerUnit } from "../../src/pricing/models/per-unit";
import { rateCharge } from "../../src/pricing/rate";
import { costContribution, meteredSources, needsMetering } from "../../src/pricing/sources";

const decimal = (maxUnits: bigint, maxScale: number) =>
	fc
		.tuple(fc.bigInt({ min: 0n, max: maxUnits }), fc.integer({ min: 0, max: maxScale }))
		.map(([units, scale]) => Decimal.fromUnits(units, scale));
/** A markup percent as JSON carries it: 0–10,000 with up to 10 decimals (so 1 + m/100 has at most 12). */
const markup = decimal(10n ** 14n, 10).filter((m) => m.lte(Decimal.from(10_000)));
const cost = decimal(10n ** 15n, 12);
const currency = fc.constantFrom("USD", "EUR", "JPY", "KWD");

const costSource = { kind: "action", type: "llm_call", aggregate: "cost" } as const;
const costPlus = (markup_percent: number, included_quantity?: number) =>
	Charge.parse({
		metric: "model_cost",
		source: costSource,
		model: "cost_plus",
		markup_percent,
		...(included_quantity === undefined ? {} : { included_quantity }),
	});

describe("cost_plus", () => {
	it("bills the cost with the markup on top, rounded once per line", () => {
		// 12.345 × 1.25 = 15.43125 → 15.43
		expect(rateCharge(costPlus(25), Decimal.from("12.345"), "USD").amount.toString()).toBe("15.43");
		// 2.345 of cost included: (12.345 − 2.345) × 1.25 = 12.5
		const withIncluded = rateCharge(costPlus(25, 2.345), Decimal.from("12.345"), "USD");
		expect(withIncluded.billable_quantity.toString()).toBe("10");
		expect(withIncluded.amount.toString()).toBe("12.5");
		// 0 % is cost pass-through; 10,000 % is 101 times the cost.
		expect(rateCharge(costPlus(0), Decimal.from("0.005"), "USD").amount.toString()).toBe("0.01");
		expect(rateCharge(costPlus(10000), Decimal.from("0.01"), "USD").amount.toString()).toBe("1.01");
		expect(rateCharge(costPlus(33.333), Decimal.ZERO, "USD").amount.toString()).toBe("0");
		expect(rateCharge(costPlus(25), Decimal.from("1234.5"), "JPY").amount.toString()).toBe("1543");
	});

	it("is per_unit pricing at a unit price of 1 + markup / 100 (differential, property)", () => {
		fc.assert(
			fc.property(markup, cost, (m, c) => {
				const unitPrice = Decimal.ONE.add(m.mulPercent(Decimal.ONE));
				expect(
					rateCostPlus({ markup_percent: m.toNumber() }, c).amount.eq(
						ratePerUnit({ unit_price: unitPrice.toNumber() }, c).amount,
					),
				).toBe(true);
			}),
		);
	});

	it("never bills less than the cost, nor less for more cost (property)", () => {
		fc.assert(
			fc.property(markup, cost, cost, currency, (m, a, b, cur) => {
				const charge = costPlus(m.toNumber());
				const [low, high] = a.lte(b) ? [a, b] : [b, a];
				const lowAmount = rateCharge(charge, low, cur).amount;
				expect(lowAmount.lte(rateCharge(charge, high, cur).amount)).toBe(true);
				expect(lowAmount.gte(low.roundHalfUp(minorUnits(cur)))).toBe(true);
				expect(lowAmount.scale).toBeLessThanOrEqual(minorUnits(cur));
			}),
		);
	});
});

describe("cost sources", () => {
	it("are computed by the accumulators, in the plan's currency", () => {
		expect(needsMetering(costSource)).toBe(true);
		const [source] = meteredSources([costPlus(25)], "EUR");
		expect(source).toMatchObject({ aggregate: "cost", currency: "EUR" });
		const eur = source as NonNullable<typeof source>;
		expect(costContribution(eur, { amount: Decimal.from("0.25"), currency: "EUR" })?.toString()).toBe("0.25");
		expect(costContribution(eur, { amount: Decimal.from("0.25"), currency: "USD" })).toBeNull();
		expect(costContribution(eur, null)).toBeNull();
		expect(meteredSources([costPlus(25)])[0]?.currency).toBe("USD");
	});
});
