import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { Charge, RatePlanInput } from "../../src/pricing/charges";
import { quantitiesForPlan, type UsageAggregate } from "../../src/pricing/quantities";
import { rateCharge, ratedUsageToJson, rateUsage } from "../../src/pricing/rate";

const d = (x: string | number) => Decimal.from(x);
const tokens = { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" } as const;
const revenue = { kind: "outcome", type: "deal.closed", aggregate: "sum" } as const;

/** A valid charge: defaults for metric and source, the rest from the test. Parsed, so examples stay valid. */
function charge(fields: Record<string, unknown>): Charge {
	return Charge.parse({ metric: "tokens", source: tokens, ...fields });
}

const amountOf = (c: Charge, quantity: string | number, currency = "USD") =>
	rateCharge(c, d(quantity), currency).amount.toString();

const graduatedTiers = [
	{ up_to: 1000, unit_price: 0.01 },
	{ up_to: 10000, unit_price: 0.008 },
	{ up_to: null, unit_price: 0.005 },
];

describe("per_unit", () => {
	it("prices every unit the same and rounds the line once", () => {
		// 1,234,567 × 0.000002 = 2.469134 → 2.47
		const line = rateCharge(charge({ model: "per_unit", unit_price: 0.000002 }), d(1234567), "USD");
		expect(line.amount.toString()).toBe("2.47");
		expect(line.billable_quantity.toString()).toBe("1234567");
		expect(line.tiers).toBeUndefined();
	});
});

describe("tiered (graduated)", () => {
	it("prices each unit by the tier it falls in", () => {
		// 1,000 × 0.01 = 10; 9,000 × 0.008 = 72; 2,345 × 0.005 = 11.725; 10 + 72 + 11.725 = 93.725 → 93.73
		const line = rateCharge(charge({ model: "tiered", tiers: graduatedTiers }), d(12345), "USD");
		expect(line.amount.toString()).toBe("93.73");
		expect(
			line.tiers?.map((t) => [t.up_to?.toString() ?? null, t.quantity.toString(), t.amount.toString()]),
		).toEqual([
			["1000", "1000", "10"],
			["10000", "9000", "72"],
			[null, "2345", "11.725"],
		]);
	});

	it("adds the flat fee of every tier entered, even by a fraction of a unit", () => {
		const withFees = charge({
			model: "tiered",
			tiers: [
				{ up_to: 10, unit_price: 0, flat_fee: 5 },
				{ up_to: null, unit_price: 1, flat_fee: 2 },
			],
		});
		expect(amountOf(withFees, 0)).toBe("0"); // no tier entered
		expect(amountOf(withFees, 3)).toBe("5"); // first tier: 3 × 0 + 5
		expect(amountOf(withFees, 10)).toBe("5"); // exactly fills the first tier, second not entered
		expect(amountOf(withFees, 10.5)).toBe("7.5"); // 5 + (0.5 × 1 + 2)
	});
});

describe("volume", () => {
	const volume = charge({ model: "volume", tiers: graduatedTiers });

	it("puts a quantity equal to up_to in that tier, and one more in the next", () => {
		expect(amountOf(volume, 1000)).toBe("10"); // 1,000 × 0.01
		expect(amountOf(volume, 1001)).toBe("8.01"); // 1,001 × 0.008 = 8.008 → 8.01
		expect(amountOf(volume, 10000)).toBe("80"); // 10,000 × 0.008
		expect(amountOf(volume, 10001)).toBe("50.01"); // 10,001 × 0.005 = 50.005 → 50.01 (half up)
	});

	it("lists every tier, only the applied one non-zero", () => {
		const line = rateCharge(volume, d(1001), "USD");
		expect(line.tiers?.map((t) => [t.quantity.toString(), t.amount.toString()])).toEqual([
			["0", "0"],
			["1001", "8.008"],
			["0", "0"],
		]);
	});

	it("adds only the applied tier's flat fee, and nothing for zero", () => {
		const withFees = charge({
			model: "volume",
			tiers: [
				{ up_to: 100, unit_price: 1, flat_fee: 5 },
				{ up_to: null, unit_price: 0.5, flat_fee: 20 },
			],
		});
		expect(amountOf(withFees, 0)).toBe("0");
		expect(amountOf(withFees, 100)).toBe("105"); // 100 × 1 + 5
		expect(amountOf(withFees, 101)).toBe("70.5"); // 101 × 0.5 + 20
	});
});

describe("package", () => {
	const packages = charge({ model: "package", package_size: 1000, package_price: 5 });

	it("charges every started package in full", () => {
		expect(amountOf(packages, 1001)).toBe("10"); // ceil(1001 / 1000) = 2 packages × 5
		expect(amountOf(packages, 1000)).toBe("5"); // exactly 1 package
		expect(amountOf(packages, 0.5)).toBe("5"); // a fraction starts a package
		expect(amountOf(packages, 0)).toBe("0");
	});
});

describe("percentage", () => {
	it("takes a share of summed outcome values", () => {
		const share = charge({ metric: "deal_value", source: revenue, model: "percentage", percent: 10 });
		const aggregates: UsageAggregate[] = [
			{ kind: "outcome", type: "deal.closed", field: "", count: 2, sum: "1000.5" },
			{ kind: "outcome", type: "deal.closed", field: "", count: 1, sum: "234.065" },
		];
		const quantity = quantitiesForPlan([share], aggregates).get("deal_value");
		expect(quantity?.toString()).toBe("1234.565");
		// 10% of 1,234.565 = 123.4565 → 123.46
		expect(rateCharge(share, quantity ?? Decimal.ZERO, "USD").amount.toString()).toBe("123.46");
	});
});

describe("currencies", () => {
	it("rounds JPY to whole yen", () => {
		const yen = charge({ model: "per_unit", unit_price: 0.5 });
		expect(amountOf(yen, 1235, "JPY")).toBe("618"); // 617.5 → 618
		expect(amountOf(yen, 1234, "JPY")).toBe("617"); // 617 exactly
	});

	it("rounds KWD to three decimals", () => {
		const dinar = charge({ model: "per_unit", unit_price: 0.0012345 });
		expect(amountOf(dinar, 1234, "KWD")).toBe("1.523"); // 1.523373 → 1.523
		expect(amountOf(charge({ model: "per_unit", unit_price: 0.0001 }), 5, "KWD")).toBe("0.001"); // 0.0005 → 0.001
	});
});

describe("included_quantity", () => {
	it("bills only what exceeds the free units", () => {
		const line = rateCharge(
			charge({ model: "per_unit", unit_price: 0.01, included_quantity: 1000 }),
			d(1500),
			"USD",
		);
		expect(line.quantity.toString()).toBe("1500");
		expect(line.billable_quantity.toString()).toBe("500");
		expect(line.amount.toString()).toBe("5"); // 500 × 0.01
	});

	it("never makes the billable quantity negative", () => {
		const line = rateCharge(
			charge({ model: "per_unit", unit_price: 1, included_quantity: 1000 }),
			d(800),
			"USD",
		);
		expect(line.billable_quantity.toString()).toBe("0");
		expect(line.amount.toString()).toBe("0");
	});

	it("applies before the tiers", () => {
		// billable 13,345 − 1,000 = 12,345 → 93.725 → 93.73, as above
		expect(amountOf(charge({ model: "tiered", tiers: graduatedTiers, included_quantity: 1000 }), 13345)).toBe(
			"93.73",
		);
	});
});

describe("rateUsage", () => {
	const plan = RatePlanInput.parse({
		name: "Agent Pro",
		base_fee: 29.99,
		charges: [
			{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 },
			{
				metric: "calls",
				source: { kind: "action", type: "llm.call", aggregate: "count" },
				model: "package",
				package_size: 100,
				package_price: 1,
			},
		],
	});

	it("lists the base fee first, then every metric in plan order, absent ones at 0", () => {
		const result = rateUsage(plan, { tokens: d(1234567) });
		// 29.99 + 2.47 + 0 = 32.46
		expect(ratedUsageToJson(result)).toEqual({
			currency: "USD",
			charges: [
				{ metric: "base_fee", model: "flat", quantity: 1, billable_quantity: 1, amount: 29.99 },
				{ metric: "tokens", model: "per_unit", quantity: 1234567, billable_quantity: 1234567, amount: 2.47 },
				{ metric: "calls", model: "package", quantity: 0, billable_quantity: 0, amount: 0 },
			],
			total: 32.46,
		});
	});

	it("totals the rounded lines, not the exact amounts", () => {
		// Two lines of 0.005 each round to 0.01 each: the total is 0.02, not round(0.01) = 0.01.
		const halfCents = RatePlanInput.parse({
			name: "Half cents",
			charges: [
				{ metric: "a", source: tokens, model: "per_unit", unit_price: 0.005 },
				{ metric: "b", source: { ...tokens, field: "other" }, model: "per_unit", unit_price: 0.005 },
			],
		});
		const result = rateUsage(
			halfCents,
			new Map([
				["a", d(1)],
				["b", d(1)],
			]),
		);
		expect(result.total.toString()).toBe("0.02");
	});

	it("leaves out a zero base fee and reads usage from a Map", () => {
		const result = rateUsage({ ...plan, base_fee: 0 }, new Map([["calls", d(101)]]));
		expect(result.charges.map((c) => [c.metric, c.amount.toString()])).toEqual([
			["tokens", "0"],
			["calls", "2"],
		]);
		expect(result.total.toString()).toBe("2");
	});

	it("keeps tier amounts exact in JSON and the line amount rounded", () => {
		const tiered = RatePlanInput.parse({
			name: "Tiered",
			currency: "EUR",
			charges: [{ metric: "tokens", source: tokens, model: "tiered", tiers: graduatedTiers }],
		});
		expect(ratedUsageToJson(rateUsage(tiered, { tokens: d(12345) }))).toEqual({
			currency: "EUR",
			charges: [
				{
					metric: "tokens",
					model: "tiered",
					quantity: 12345,
					billable_quantity: 12345,
					amount: 93.73,
					tiers: [
						{ up_to: 1000, quantity: 1000, amount: 10 },
						{ up_to: 10000, quantity: 9000, amount: 72 },
						{ up_to: null, quantity: 2345, amount: 11.725 },
					],
				},
			],
			total: 93.73,
		});
	});

	it("does not read metric names from the object prototype", () => {
		const odd = RatePlanInput.parse({
			name: "Odd",
			charges: [{ metric: "constructor", source: tokens, model: "per_unit", unit_price: 1 }],
		});
		expect(rateUsage(odd, {}).total.toString()).toBe("0");
	});
});

describe("quantitiesForPlan", () => {
	const charges = RatePlanInput.parse({
		name: "Mixed",
		charges: [
			{
				metric: "calls",
				source: { kind: "action", type: "llm.call", aggregate: "count" },
				model: "per_unit",
				unit_price: 1,
			},
			{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 1 },
			{
				metric: "deals",
				source: { kind: "outcome", type: "deal.closed", aggregate: "count" },
				model: "per_unit",
				unit_price: 1,
			},
			{ metric: "deal_value", source: revenue, model: "percentage", percent: 1 },
			{
				metric: "searches",
				source: { kind: "action", type: "search", aggregate: "count" },
				model: "per_unit",
				unit_price: 1,
			},
		],
	}).charges;

	it("adds rows of the same kind, type and field, and picks the right one per source", () => {
		const aggregates: UsageAggregate[] = [
			{ kind: "action", type: "llm.call", field: "", count: 3, sum: "0" },
			{ kind: "action", type: "llm.call", field: "", count: 4, sum: "0" }, // another instance
			{ kind: "action", type: "llm.call", field: "tokens", count: 6, sum: "1500.5" },
			{ kind: "action", type: "llm.call", field: "tokens", count: 1, sum: "0.25" },
			{ kind: "action", type: "llm.call", field: "cost", count: 7, sum: "99" }, // not used by the plan
			{ kind: "outcome", type: "deal.closed", field: "", count: 2, sum: "1200.10" },
			{ kind: "outcome", type: "deal.lost", field: "", count: 5, sum: "70" }, // other type
		];
		const quantities = quantitiesForPlan(charges, aggregates);
		expect(Object.fromEntries([...quantities].map(([metric, q]) => [metric, q.toString()]))).toEqual({
			calls: "7",
			tokens: "1500.75",
			deals: "2",
			deal_value: "1200.1",
			searches: "0",
		});
	});
});
