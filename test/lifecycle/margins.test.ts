/**
 * Margins (CONTRACT §21): the P&L by agent, customer and product, and month by month, with figures computed by
 * hand; and a property that the rows always add up to the totals.
 *
 * May 2023. Alpha (plan Basic: base fee 10, calls 1.00 each) and Beta (plan Plus: base fee 20, calls 0.50):
 *   a1 → Scout:      3 calls, cost 0.40 each ("gpu")  → costs 1.20
 *   a2 (no agent):   1 call,  cost 0.10               → costs 0.10
 *   b1 → Scout:      4 calls, cost 0.25 each          → costs 1.00
 * plus a manual cost: Scout, "hosting", 5.00 for May, no customer.
 * Invoices: Alpha 10 + 4 × 1.00 = 14.00; Beta 20 + 4 × 0.50 = 22.00. Revenue 36.00, costs 7.30.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { CostRecord } from "../../src/costs/costs";
import { Decimal } from "../../src/lib/decimal";
import { pnlByKey } from "../../src/reports/pnl";
import type { RevenueLine } from "../../src/reports/revenue";
import { expectError, get, post } from "../helpers";
import { actions, generateOne, sendActions } from "../invoicing/fixtures";
import { agentWith, clockAt, customerNamed } from "../reports/fixtures";

const callsAt = (price: number) => ({
	currency: "USD",
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: price,
		},
	],
});
const MAY = "start_date=2023-05-01&end_date=2023-05-31";

let world: Awaited<ReturnType<typeof seedMay>>;

async function seedMay() {
	clockAt("2023-05-02T09:00:00.000Z");
	const alpha = await customerNamed("Alpha", { name: "Basic", base_fee: 10, ...callsAt(1) }, 2);
	const beta = await customerNamed("Beta", { name: "Plus", base_fee: 20, ...callsAt(0.5) }, 1);
	const [a1, a2] = alpha.instances as [string, string];
	const b1 = beta.instances[0] as string;
	const scout = await agentWith("Scout", [a1, b1]);
	await sendActions([
		...actions(a1, "call", 3, { cost: 0.4, cost_type: "gpu" }),
		...actions(a2, "call", 1, { cost: 0.1 }),
		...actions(b1, "call", 4, { cost: 0.25 }),
	]);
	const manual = await post("/v1/costs", {
		agent_id: scout.id,
		cost_type: "hosting",
		amount: 5,
		period: "2023-05",
	});
	expect(manual.status, JSON.stringify(manual.body)).toBe(201);
	clockAt("2023-05-31T12:00:00.000Z");
	expect((await generateOne("2023-05", alpha.account.id)).amount).toBe(14);
	expect((await generateOne("2023-05", beta.account.id)).amount).toBe(22);
	vi.useRealTimers();
	return { alpha, beta, scout };
}

beforeAll(async () => {
	world = await seedMay();
});
afterAll(() => {
	vi.useRealTimers();
});

async function pnl(query: string) {
	const response = await get(`/v1/reports/pnl?${query}`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

const TOTALS = { revenue: 36, costs: 7.3, margin: 28.7, margin_percent: 79.72 }; // 28.70 / 36 = 79.722…%

describe("GET /v1/reports/pnl group_by", () => {
	it("by customer: each account's invoices and costs; the manual cost without a customer is unattributed", async () => {
		const report = await pnl(`${MAY}&group_by=customer`);
		expect(report).toMatchObject({ ...TOTALS, group_by: "customer" });
		expect(report.breakdown).toEqual([
			// 21 / 22 = 95.454…%
			{ id: world.beta.account.id, name: "Beta", revenue: 22, costs: 1, margin: 21, margin_percent: 95.45 },
			// 12.70 / 14 = 90.714…%
			{
				id: world.alpha.account.id,
				name: "Alpha",
				revenue: 14,
				costs: 1.3,
				margin: 12.7,
				margin_percent: 90.71,
			},
			{ id: null, name: "unattributed", revenue: 0, costs: 5, margin: -5, margin_percent: 0 },
		]);
	});

	it("by agent: usage lines split by share, base fees and the unassigned instance unattributed", async () => {
		const report = await pnl(`${MAY}&group_by=agent`);
		// Scout: calls 3 × 1.00 + 4 × 0.50 = 5.00 of revenue; costs 1.20 + 1.00 + 5.00 = 7.20.
		// unattributed: base fees 30 + a2's call 1.00 = 31.00; costs 0.10; 30.90 / 31 = 99.677…%
		expect(report.breakdown).toEqual([
			{ id: null, name: "unattributed", revenue: 31, costs: 0.1, margin: 30.9, margin_percent: 99.68 },
			{ id: world.scout.id, name: "Scout", revenue: 5, costs: 7.2, margin: -2.2, margin_percent: -44 },
		]);
		expect(report).toMatchObject(TOTALS);
	});

	it("by product: costs from events carry the plan of their subscription", async () => {
		const report = await pnl(`${MAY}&group_by=product`);
		expect(report.breakdown).toEqual([
			{ id: world.beta.plan.id, name: "Plus", revenue: 22, costs: 1, margin: 21, margin_percent: 95.45 },
			{
				id: world.alpha.plan.id,
				name: "Basic",
				revenue: 14,
				costs: 1.3,
				margin: 12.7,
				margin_percent: 90.71,
			},
			{ id: null, name: "unattributed", revenue: 0, costs: 5, margin: -5, margin_percent: 0 },
		]);
	});

	it("without group_by or interval answers the totals alone, as before", async () => {
		expect(await pnl(MAY)).toEqual({
			...TOTALS,
			currency: "USD",
			start_date: "2023-05-01",
			end_date: "2023-05-31",
		});
	});

	it("interval=month: one row per month of the range, oldest first, empty months included", async () => {
		const report = await pnl("start_date=2023-04-01&end_date=2023-06-30&interval=month");
		const empty = { revenue: 0, costs: 0, margin: 0, margin_percent: 0 };
		expect(report.series).toEqual([
			{ period: "2023-04", ...empty },
			{ period: "2023-05", ...TOTALS },
			{ period: "2023-06", ...empty },
		]);
		expect(report).toMatchObject(TOTALS);
	});

	it.each([
		["an unknown group_by", `${MAY}&group_by=cost_type`, "group_by"],
		["an unknown interval", `${MAY}&interval=day`, "interval"],
		[
			"a series longer than ten years",
			"start_date=2001-01-01&end_date=2023-05-31&interval=month",
			"interval",
		],
	])("answers 400 for %s", async (_, query, path) => {
		const error = expectError(await get(`/v1/reports/pnl?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});
});

describe("pnlByKey (property)", () => {
	const id = (prefix: string) => fc.constantFrom(null, `${prefix}_1`, `${prefix}_2`, `${prefix}_3`);
	const money = fc.integer({ min: 0, max: 1_000_000 }).map((cents) => Decimal.fromUnits(BigInt(cents), 2));
	const line = fc.record({
		billingPeriod: fc.constant("2023-05"),
		accountId: fc.constantFrom("acct_1", "acct_2"),
		ratePlanId: fc.constantFrom("plan_1", "plan_2"),
		metric: fc.constantFrom("base_fee", "calls"),
		amount: money,
		agentShares: fc.option(
			fc.array(fc.record({ agent_id: id("agt"), quantity: fc.integer({ min: 1, max: 999 }).map(String) }), {
				maxLength: 4,
			}),
			{ nil: null },
		),
	}) as fc.Arbitrary<RevenueLine>;
	const cost = fc.record({
		id: fc.constant("cost_x"),
		agent_id: id("agt"),
		customer_id: id("acct"),
		rate_plan_id: id("plan"),
		cost_type: fc.constant("gpu"),
		amount: fc.integer({ min: 0, max: 1_000_000 }).map((units) => Decimal.fromUnits(BigInt(units), 4)),
		currency: fc.constant("USD"),
		period: fc.constant("2023-05"),
		source: fc.constantFrom("events", "manual"),
		created_at: fc.constant("2023-05-01T00:00:00.000Z"),
	}) as fc.Arbitrary<CostRecord>;

	it("breakdown rows add up exactly to the totals, for every grouping", () => {
		fc.assert(
			fc.property(
				fc.array(line, { maxLength: 20 }),
				fc.array(cost, { maxLength: 20 }),
				fc.constantFrom("agent", "customer", "product"),
				(lines, costs, groupBy) => {
					const rows = [...pnlByKey(lines, costs, groupBy as "agent", "USD").values()];
					const sum = (pick: (r: (typeof rows)[number]) => Decimal) => Decimal.sum(rows.map(pick)).toString();
					const revenue = Decimal.sum(lines.map((l) => l.amount));
					const costsTotal = Decimal.sum(costs.map((c) => c.amount));
					expect(sum((r) => r.revenue)).toBe(revenue.toString());
					expect(sum((r) => r.costs)).toBe(costsTotal.toString());
					expect(sum((r) => r.margin)).toBe(revenue.sub(costsTotal).toString());
				},
			),
			{ numRuns: 300 },
		);
	});
});
