import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CostRecord } from "../../src/costs/costs";
import { Decimal } from "../../src/lib/decimal";
import { marginsByModel, modelOfCharge } from "../../src/reports/margins";
import { pnlByKey, type pnlFigures } from "../../src/reports/pnl";
import type { RevenueLine } from "../../src/reports/revenue";

// Whatever the lines and costs, every breakdown of the margins adds up to the totals to the last digit, and each
// row's margin is its revenue minus its costs.

const money = (places: number) =>
	fc.bigInt({ min: -(10n ** 9n), max: 10n ** 12n }).map((units) => Decimal.fromUnits(units, places));
const agentIds = fc.constantFrom(null, "agt_a", "agt_b", "agt_c");
const models = fc.constantFrom(null, "gpt-4o", "gpt-4o-mini", "claude-opus-5");

const line = fc.record({
	billingPeriod: fc.constant("2026-11"),
	accountId: fc.constantFrom("acct_1", "acct_2"),
	ratePlanId: fc.constantFrom("plan_1", "plan_2"),
	metric: fc.constantFrom("base_fee", "gpt", "mini", "any"),
	amount: money(2),
	agentShares: fc.option(
		fc.array(
			fc.record({
				agent_id: agentIds,
				quantity: fc.integer({ min: 1, max: 10_000 }).map(String),
			}),
			{ minLength: 1, maxLength: 4 },
		),
		{ nil: null },
	),
}) satisfies fc.Arbitrary<RevenueLine>;

const cost = fc.record({
	id: fc.constant("cost_x"),
	agent_id: agentIds,
	customer_id: fc.constantFrom(null, "acct_1", "acct_2"),
	rate_plan_id: fc.constantFrom(null, "plan_1", "plan_2"),
	cost_type: fc.constantFrom("llm_tokens", "gpu"),
	model: models,
	amount: money(12),
	currency: fc.constant("USD"),
	period: fc.constant("2026-11"),
	source: fc.constantFrom("events", "manual", "model_prices"),
	created_at: fc.constant("2026-11-01T00:00:00.000Z"),
}) satisfies fc.Arbitrary<CostRecord>;

const chargeModels = new Map([
	[
		"plan_1",
		new Map<string, string | null>([
			["gpt", "gpt-4o"],
			["mini", "gpt-4o-mini"],
			["any", null],
		]),
	],
	["plan_2", new Map<string, string | null>([["gpt", "claude-opus-5"]])],
]);

function expectSumsToTotals(
	rows: Map<string | null, ReturnType<typeof pnlFigures>>,
	lines: RevenueLine[],
	costs: CostRecord[],
) {
	const revenue = Decimal.sum(lines.map((l) => l.amount));
	const costTotal = Decimal.sum(costs.map((c) => c.amount));
	const figures = [...rows.values()];
	expect(Decimal.sum(figures.map((r) => r.revenue)).toString()).toBe(revenue.toString());
	expect(Decimal.sum(figures.map((r) => r.costs)).toString()).toBe(costTotal.toString());
	expect(Decimal.sum(figures.map((r) => r.margin)).toString()).toBe(revenue.sub(costTotal).toString());
	for (const row of figures) expect(row.margin.toString()).toBe(row.revenue.sub(row.costs).toString());
}

describe("margins breakdown properties", () => {
	it("rows of every grouping sum exactly to the totals", () => {
		fc.assert(
			fc.property(fc.array(line, { maxLength: 30 }), fc.array(cost, { maxLength: 30 }), (lines, costs) => {
				expectSumsToTotals(marginsByModel(lines, costs, chargeModels), lines, costs);
				for (const groupBy of ["agent", "customer", "product"] as const) {
					expectSumsToTotals(pnlByKey(lines, costs, groupBy, "USD"), lines, costs);
				}
			}),
			{ numRuns: 200 },
		);
	});

	it("attributes revenue to a model only through a filter naming exactly one", () => {
		const charge = (model: unknown) =>
			({
				metric: "m",
				model: "per_unit",
				unit_price: 1,
				source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model } },
			}) as Parameters<typeof modelOfCharge>[0];
		expect(modelOfCharge(charge("gpt-4o"))).toBe("gpt-4o");
		expect(modelOfCharge(charge(["gpt-4o"]))).toBe("gpt-4o");
		expect(modelOfCharge(charge(["gpt-4o", "gpt-4o-mini"]))).toBeNull();
		expect(
			modelOfCharge({
				metric: "m",
				model: "per_unit",
				unit_price: 1,
				source: { kind: "action", type: "llm_call", aggregate: "count" },
			} as Parameters<typeof modelOfCharge>[0]),
		).toBeNull();
	});
});
