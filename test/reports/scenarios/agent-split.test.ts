import { afterEach, describe, expect, it, vi } from "vitest";
import { actions, generateOne, linesOf, sendActions, sendOutcome } from "../../invoicing/fixtures";
import { agentWith, clockAt, customerNamed, revenueReport, rowsOf } from "../fixtures";

// Revenue by agent (§12): each usage line is split across agents by their share of the line's quantity, to the
// cent, by largest remainder (a leftover cent goes to the largest remainder, ties to the agent whose id sorts
// first); base fees and the usage of unassigned instances go to {id: null, name: "unattributed"}.
afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: revenue split across agents", () => {
	it("attributes base fees and unassigned instances to nobody, and splits uneven shares to the cent", async () => {
		clockAt("2025-09-03T10:00:00.000Z");
		const { account, instances } = await customerNamed(
			"Split & Co",
			{
				name: "Split",
				currency: "USD",
				base_fee: 9.99,
				charges: [
					{
						metric: "calls",
						source: { kind: "action", type: "call", aggregate: "count" },
						model: "package",
						package_size: 10,
						package_price: 1,
					},
					{
						metric: "tokens",
						source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
						model: "per_unit",
						unit_price: 0.001,
					},
					{
						metric: "sales",
						source: { kind: "outcome", type: "sale", aggregate: "sum" },
						model: "percentage",
						percent: 10,
					},
				],
			},
			4,
		);
		const [a, b, c, unassigned] = instances as [string, string, string, string];
		// Created in this order, so their ids sort in this order too.
		const ant = await agentWith("Ant", [a]);
		const bee = await agentWith("Bee", [b]);
		const cat = await agentWith("Cat", [c]);
		await sendActions([
			...actions(a, "call", 1),
			...actions(b, "call", 1),
			...actions(c, "call", 1),
			...actions(a, "llm_call", 1, { tokens: 700 }),
			...actions(unassigned, "llm_call", 1, { tokens: 300 }),
		]);
		await sendOutcome(a, "sale", 33.33);
		await sendOutcome(b, "sale", 66.67);

		clockAt("2025-10-01T00:10:00.000Z");
		// base fee 9.99; calls 3 → 1 package of 10 → 1.00; tokens 1,000 × 0.001 = 1.00;
		// sales 33.33 + 66.67 = 100 × 10% = 10.00; total 9.99 + 1 + 1 + 10 = 21.99
		const invoice = await generateOne("2025-09", account.id);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 9.99],
			["calls", 3, 1],
			["tokens", 1000, 1],
			["sales", 100, 10],
		]);

		// calls 1.00 in thirds: 33.33… cents each → 33 each, and the leftover cent to Ant (equal remainders, first id):
		//   Ant 0.34, Bee 0.33, Cat 0.33
		// tokens 1.00: Ant 700/1000 → 0.70, unassigned 300/1000 → 0.30
		// sales 10.00: Ant 33.33% → 333.3 cents, Bee 66.67% → 666.7 cents; floors 333 + 666 = 999, the leftover cent
		//   to the larger remainder (0.7, Bee): Ant 3.33, Bee 6.67
		// Ant 0.34 + 0.70 + 3.33 = 4.37; Bee 0.33 + 6.67 = 7.00; Cat 0.33; unattributed 9.99 + 0.30 = 10.29
		// 10.29 + 7.00 + 4.37 + 0.33 = 21.99
		const byAgent = await revenueReport("start_date=2025-09-01&end_date=2025-09-30&group_by=agent");
		expect(byAgent.revenue).toBe(21.99);
		expect(rowsOf(byAgent)).toEqual([
			[null, "unattributed", 10.29],
			[bee.id, "Bee", 7],
			[ant.id, "Ant", 4.37],
			[cat.id, "Cat", 0.33],
		]);
	});

	it("splits a line across seven agents by largest remainder, summing exactly", async () => {
		clockAt("2025-10-02T10:00:00.000Z");
		const { account, instances } = await customerNamed(
			"Seven Seas",
			{
				name: "Odd price",
				currency: "USD",
				charges: [
					{
						metric: "calls",
						source: { kind: "action", type: "call", aggregate: "count" },
						model: "per_unit",
						unit_price: 0.037,
					},
				],
			},
			7,
		);
		const agents = [];
		for (const [i, instance] of instances.entries()) {
			agents.push(await agentWith(`Agent ${i + 1}`, [instance]));
			// Agent k makes k calls: 1 + 2 + … + 7 = 28.
			await sendActions(actions(instance, "call", i + 1));
		}
		clockAt("2025-11-01T00:10:00.000Z");
		// 28 × 0.037 = 1.036 → 1.04 (half up)
		expect(linesOf(await generateOne("2025-10", account.id))).toEqual([["calls", 28, 1.04]]);

		// 104 cents × k / 28, floor and remainder (of 28):
		//   k=1: 3 r20, k=2: 7 r12, k=3: 11 r4, k=4: 14 r24, k=5: 18 r16, k=6: 22 r8, k=7: 26 r0
		// floors add up to 101; the 3 leftover cents go to the largest remainders: k=4 (24), k=1 (20), k=5 (16)
		//   → 4, 7, 11, 15, 19, 22, 26 cents = 104
		const byAgent = await revenueReport("start_date=2025-10-01&end_date=2025-10-31&group_by=agent");
		expect(byAgent.revenue).toBe(1.04);
		const shares = [0.04, 0.07, 0.11, 0.15, 0.19, 0.22, 0.26];
		const expected = agents.map((agent, i) => [agent.id, agent.name, shares[i]]);
		expect(rowsOf(byAgent)).toEqual(expected.reverse());
	});
});
