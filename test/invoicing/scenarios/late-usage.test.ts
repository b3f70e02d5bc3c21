import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAgent, post } from "../../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	invoicesOf,
	linesOf,
	sendActions,
} from "../fixtures";

// Usage that arrives after the period was invoiced: the whole period is rated again and only the difference is
// billed, as one supplementary invoice. With graduated tiers the late units are priced in the tiers they fall
// into, which is not what pricing them on their own would give.
const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "llm_tokens",
			description: "LLM tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "tiered",
			tiers: [
				{ up_to: 1000, unit_price: 0.1 },
				{ up_to: 5000, unit_price: 0.05 },
				{ up_to: null, unit_price: 0.01 },
			],
		},
		{
			metric: "tool_calls",
			source: { kind: "action", type: "tool_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.25,
		},
	],
};

describe("scenario: late usage", () => {
	it("bills only the difference, tier by tier, once", async () => {
		const { account, instances } = await customer(plan, { instances: 2 });
		const [early, late] = instances as [string, string];
		const agent = await createAgent();
		expect((await post(`/v1/agents/${agent.id}/instances`, { key: late })).status).toBe(200);
		await sendActions([
			{ agent_key: early, action_type: "llm_call", metadata: { tokens: 700 } },
			{ agent_key: early, action_type: "llm_call", metadata: { tokens: 500 } },
			...actions(early, "tool_call", 3),
		]);
		const regular = await generateOne(currentPeriod(), account.id);
		// tokens 1,200: 1,000 × 0.10 = 100.00 + 200 × 0.05 = 10.00 → 110.00; 3 tool calls × 0.25 = 0.75
		// 10.00 + 110.00 + 0.75 = 120.75
		expect(linesOf(regular)).toEqual([
			["base_fee", 1, 10],
			["llm_tokens", 1200, 110],
			["tool_calls", 3, 0.75],
		]);
		expect(regular.amount).toBe(120.75);

		await sendActions([
			{ agent_key: late, action_type: "llm_call", metadata: { tokens: 4000 } },
			{ agent_key: late, action_type: "llm_call", metadata: { tokens: 300 } },
		]);
		const supplementary = await generateOne(currentPeriod(), account.id);
		// tokens now 5,500: 1,000 × 0.10 = 100 + 4,000 × 0.05 = 200 + 500 × 0.01 = 5 → 305.00
		// already billed 110.00 → difference 195.00 for 4,300 more tokens
		// (priced alone, 4,300 tokens would cost 1,000 × 0.10 + 3,300 × 0.05 = 265.00: the tiers matter)
		// base fee and tool calls unchanged → no line for them
		expect(supplementary).toMatchObject({ kind: "supplementary", status: "open", amount: 195 });
		expect(linesOf(supplementary)).toEqual([["llm_tokens", 4300, 195]]);
		// The month was still open when it was first invoiced: these tokens are usage since that invoice (§19).
		expect(supplementary.line_items[0]?.description).toBe(
			"LLM tokens — usage since the previous invoice: 4,300 units (5,500 in total)",
		);
		expect(Number(supplementary.number.slice(4))).toBe(Number(regular.number.slice(4)) + 1);

		// The late tokens all came from the agent's instance: the supplementary line is its alone.
		const shares = await env.DB.prepare("SELECT agent_shares FROM invoice_lines WHERE invoice_id = ?1")
			.bind(supplementary.id)
			.first<{ agent_shares: string }>();
		expect(JSON.parse(shares?.agent_shares ?? "null")).toEqual([{ agent_id: agent.id, quantity: "4300" }]);

		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });
		const all = await invoicesOf(account.id);
		expect(all.map((invoice) => invoice.kind)).toEqual(["supplementary", "regular"]);
		// Everything billed for the period equals the period's full rating: 10 + 305 + 0.75 = 315.75
		expect(all.reduce((sum, invoice) => sum + invoice.amount * 100, 0) / 100).toBe(315.75);
	});

	it("bills late usage again after a supplementary invoice was voided", async () => {
		const { account, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "tool_call", 2));
		await generateOne(currentPeriod(), account.id);
		await sendActions(actions(instances[0] as string, "tool_call", 4));
		const supplementary = await generateOne(currentPeriod(), account.id);
		// 4 more tool calls × 0.25 = 1.00
		expect(linesOf(supplementary)).toEqual([["tool_calls", 4, 1]]);
		expect((await post(`/v1/invoices/${supplementary.id}/void`)).status).toBe(200);
		const again = await generateOne(currentPeriod(), account.id);
		expect(again).toMatchObject({ kind: "supplementary", amount: 1 });
		expect(linesOf(again)).toEqual([["tool_calls", 4, 1]]);
	});
});
