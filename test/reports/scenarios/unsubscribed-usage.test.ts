import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { actions, generateOne, instanceKey, sendActions } from "../../invoicing/fixtures";
import {
	agentWith,
	clockAt,
	costList,
	costRowsOf,
	customerNamed,
	flush,
	pnlReport,
	revenueReport,
	rowsOf,
} from "../fixtures";

// Usage of an instance in no subscription is recorded and shows in costs, but is never billed (§6, §11). March 2025:
//   Paying (plan: calls 1.00 each), instance of "Billed agent": 2 calls costing 0.10 each → invoice 2.00
//   an instance of "Loose agent" in no subscription: 3 llm_call costing 0.50 each as "llm" → costs 1.50
//   an instance of no agent and no subscription: 1 call costing 0.25 → costs 0.25
const MARCH = "start_date=2025-03-01&end_date=2025-03-31";
let world: Awaited<ReturnType<typeof seed>>;

async function seed() {
	clockAt("2025-03-12T09:00:00.000Z");
	const paying = await customerNamed(
		"Paying",
		{
			name: "Calls",
			currency: "USD",
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 1,
				},
			],
		},
		1,
	);
	const billedAgent = await agentWith("Billed agent", paying.instances);
	const looseKey = instanceKey("loose");
	const strayKey = instanceKey("stray");
	const looseAgent = await agentWith("Loose agent", [looseKey]);
	await sendActions([
		...actions(paying.instances[0] as string, "call", 2, { cost: 0.1 }),
		...actions(looseKey, "llm_call", 3, { cost: 0.5, cost_type: "llm" }),
		...actions(strayKey, "call", 1, { cost: 0.25 }),
	]);
	clockAt("2025-04-01T00:10:00.000Z");
	const invoice = await generateOne("2025-03", paying.account.id);
	// Instance accumulators are not flushed by invoicing: their alarm would do it; here it is done at once.
	await flush({ subscriptions: [paying.subscription.id], instances: [looseKey, strayKey] });
	vi.useRealTimers();
	return { paying, billedAgent, looseAgent, invoice };
}

beforeAll(async () => {
	world = await seed();
});
afterAll(() => {
	vi.useRealTimers();
});

describe("scenario: usage of instances without a subscription", () => {
	it("shows their costs, with no customer", async () => {
		const { paying, billedAgent, looseAgent } = world;
		const costs = await costList(MARCH);
		// 0.20 + 1.50 + 0.25 = 1.95
		expect(costs).toMatchObject({ total: 1.95, count: 3 });
		const row = (agentId: string | null, customerId: string | null, costType: string, amount: number) => ({
			agent_id: agentId,
			customer_id: customerId,
			cost_type: costType,
			model: null,
			amount,
			currency: "USD",
			period: "2025-03",
			source: "events",
		});
		expect(costRowsOf(costs)).toEqual([
			row(billedAgent.id, paying.account.id, "call", 0.2),
			row(null, null, "call", 0.25),
			row(looseAgent.id, null, "llm", 1.5),
		]);
		expect(await costList(`agent_id=${looseAgent.id}`)).toMatchObject({ total: 1.5, count: 1 });
	});

	it("never bills them: revenue comes from the subscribed instance only", async () => {
		expect(world.invoice.amount).toBe(2);
		const byAgent = await revenueReport(`${MARCH}&group_by=agent`);
		expect(rowsOf(byAgent)).toEqual([[world.billedAgent.id, "Billed agent", 2]]);
		const byCustomer = await revenueReport(`${MARCH}&group_by=customer`);
		expect(rowsOf(byCustomer)).toEqual([[world.paying.account.id, "Paying", 2]]);
		// Their costs still weigh on the margin: 2 − 1.95 = 0.05; 0.05 / 2 × 100 = 2.5
		expect(await pnlReport(MARCH)).toMatchObject({
			revenue: 2,
			costs: 1.95,
			margin: 0.05,
			margin_percent: 2.5,
		});
	});
});
