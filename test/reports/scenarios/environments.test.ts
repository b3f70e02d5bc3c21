import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey, post } from "../../helpers";
import { actions, generateOne, sendActions } from "../../invoicing/fixtures";
import {
	agentWith,
	clockAt,
	costList,
	customerNamed,
	flush,
	pnlReport,
	revenueReport,
	rowsOf,
} from "../fixtures";

// Live and test are separate worlds (§3): invoices and costs of one environment never show in the reports of the
// other. March 2025, one customer on each side, with the same plan (base 10, calls 1.00):
//   live: 2 calls costing 0.10 each → invoice 12.00, costs 0.20
//   test: 5 calls costing 0.20 each → invoice 15.00, costs 1.00, plus a manual cost of 3.00
const plan = {
	name: "Calls",
	currency: "USD",
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};
const MARCH = "start_date=2025-03-01&end_date=2025-03-31";
let world: Awaited<ReturnType<typeof seed>>;

async function seed() {
	clockAt("2025-03-04T09:00:00.000Z");
	const testKey = await createKey("read-write", "test");
	const live = await customerNamed("Live Ltd", plan, 1);
	const test = await customerNamed("Test Ltd", plan, 1, testKey);
	const liveAgent = await agentWith("Live agent", live.instances);
	const testAgent = await agentWith("Test agent", test.instances, testKey);
	await sendActions(actions(live.instances[0] as string, "call", 2, { cost: 0.1 }), "live");
	await sendActions(actions(test.instances[0] as string, "call", 5, { cost: 0.2 }), "test");
	const manual = { agent_id: testAgent.id, cost_type: "hosting", amount: 3, period: "2025-03" };
	expect((await post("/v1/costs", manual, { key: testKey })).status).toBe(201);
	clockAt("2025-04-01T00:10:00.000Z");
	expect((await generateOne("2025-03", live.account.id)).amount).toBe(12);
	expect((await generateOne("2025-03", test.account.id, testKey)).amount).toBe(15);
	await flush({ subscriptions: [live.subscription.id] });
	await flush({ subscriptions: [test.subscription.id] }, "test");
	vi.useRealTimers();
	return { testKey, live, test, liveAgent, testAgent };
}

beforeAll(async () => {
	world = await seed();
});
afterAll(() => {
	vi.useRealTimers();
});

describe("scenario: test and live environments in reports", () => {
	it("reports only live invoices and costs to a live key", async () => {
		const { live, liveAgent, testAgent } = world;
		expect(rowsOf(await revenueReport(`${MARCH}&group_by=customer`))).toEqual([
			[live.account.id, "Live Ltd", 12],
		]);
		// 10.00 base fee, 2 calls × 1.00 = 2.00 by the live agent.
		expect(rowsOf(await revenueReport(`${MARCH}&group_by=agent`))).toEqual([
			[null, "unattributed", 10],
			[liveAgent.id, "Live agent", 2],
		]);
		// 12 − 0.20 = 11.80; 11.8 / 12 × 100 = 98.333… → 98.33
		expect(await pnlReport(MARCH)).toMatchObject({
			revenue: 12,
			costs: 0.2,
			margin: 11.8,
			margin_percent: 98.33,
		});
		expect(await costList(MARCH)).toMatchObject({ total: 0.2, count: 1 });
		expect(await costList(`agent_id=${testAgent.id}`)).toMatchObject({ total: 0, count: 0, costs: [] });
		expect(await costList(`customer_id=${world.test.account.id}`)).toMatchObject({ total: 0, count: 0 });
	});

	it("reports only test invoices and costs to a test key, read-only or not", async () => {
		const { test, testAgent, testKey } = world;
		const testReader = await createKey("read-only", "test");
		for (const key of [testKey, testReader]) {
			expect(rowsOf(await revenueReport(`${MARCH}&group_by=product`, key))).toEqual([
				[test.plan.id, "Calls", 15],
			]);
			// 15 − (5 × 0.20 + 3.00) = 15 − 4 = 11; 11 / 15 × 100 = 73.333… → 73.33
			expect(await pnlReport(MARCH, key)).toMatchObject({
				revenue: 15,
				costs: 4,
				margin: 11,
				margin_percent: 73.33,
			});
			const costs = await costList(MARCH, key);
			expect(costs).toMatchObject({ total: 4, count: 2 });
			expect(costs.costs.every((record) => record.agent_id === testAgent.id)).toBe(true);
		}
	});
});
