import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, createAgent } from "../../helpers";
import { createPlan, generate, sendActions, subscribe } from "../../invoicing/fixtures";
import { clockAt, revenueReport } from "../fixtures";

// A breakdown may name more customers or agents than D1's 100 bound parameters per statement: their names must
// still be read in one statement. 105 customers, each with one instance whose key is an agent's id (so it is
// assigned to that agent on the spot, §5), one call each. Plan: base fee 1.00, calls 0.50.
const CUSTOMERS = 105;
const label = (i: number) => String(i + 1).padStart(3, "0");

afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: a breakdown of more than a hundred customers and agents", () => {
	it("names every one of them", { timeout: 120_000 }, async () => {
		clockAt("2025-03-02T09:00:00.000Z");
		const plan = await createPlan({
			name: "Small",
			currency: "USD",
			base_fee: 1,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.5,
				},
			],
		});
		const customers: { accountId: string; agentId: string }[] = [];
		for (let i = 0; i < CUSTOMERS; i++) {
			const agent = await createAgent(undefined, { name: `Agent ${label(i)}` });
			const account = await createAccount(undefined, { name: `Customer ${label(i)}` });
			await subscribe(account.id, plan.id, [agent.id]);
			customers.push({ accountId: account.id, agentId: agent.id });
		}
		await sendActions(customers.map(({ agentId }) => ({ agent_key: agentId, action_type: "call" })));
		clockAt("2025-04-01T00:10:00.000Z");
		// Only this test's subscriptions exist in this file, so one run invoices exactly them: 1 + 0.50 = 1.50 each.
		const { invoices } = await generate("2025-03");
		expect(invoices.map((invoice) => invoice.amount)).toEqual(customers.map(() => 1.5));
		vi.useRealTimers();

		const range = "start_date=2025-03-01&end_date=2025-03-31";
		// 105 × 1.50 = 157.50; equal revenues are listed by id, which follows creation order.
		const byCustomer = await revenueReport(`${range}&group_by=customer`);
		expect(byCustomer.revenue).toBe(157.5);
		expect(byCustomer.breakdown).toEqual(
			customers.map(({ accountId }, i) => ({ id: accountId, name: `Customer ${label(i)}`, revenue: 1.5 })),
		);
		// Base fees 105 × 1.00 = 105.00 unattributed; each agent 0.50.
		const byAgent = await revenueReport(`${range}&group_by=agent`);
		expect(byAgent.breakdown).toEqual([
			{ id: null, name: "unattributed", revenue: 105 },
			...customers.map(({ agentId }, i) => ({ id: agentId, name: `Agent ${label(i)}`, revenue: 0.5 })),
		]);
	});
});
