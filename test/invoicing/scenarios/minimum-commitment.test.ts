import { describe, expect, it } from "vitest";
import { get, post } from "../../helpers";
import { currentPeriod, customer, generate, generateOne, linesOf, sendActions } from "../fixtures";

// A $500 monthly minimum (§16): the period's total is at least the minimum; late usage first eats the top-up,
// which is never billed twice, and once usage passes the minimum the period bills what was used.
const plan = {
	base_fee: 100,
	minimum_amount: 500,
	charges: [
		{
			metric: "tokens",
			description: "LLM tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "per_unit",
			unit_price: 0.001,
		},
	],
};

describe("scenario: a minimum with a supplementary invoice", () => {
	it("tops up to the minimum, then moves the top-up to usage as late usage arrives", async () => {
		const { account, subscription, plan: created } = await customer(plan);
		const [agentKey] = (await get(`/v1/subscriptions/${subscription.id}`)).body.agent_instance_ids as [
			string,
		];
		await sendActions([{ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 150000 } }]);

		// Real-time usage already shows the top-up: base 100 + tokens 150 = 250 → top-up 250, total 500.
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status).toBe(200);
		expect(usage.body.charges.at(-1)).toEqual({
			metric: "minimum_commitment",
			model: "flat",
			quantity: 1,
			billable_quantity: 1,
			amount: 250,
		});
		expect(usage.body.total).toBe(500);

		const regular = await generateOne(currentPeriod(), account.id);
		expect(linesOf(regular)).toEqual([
			["base_fee", 1, 100],
			["tokens", 150000, 150],
			["minimum_commitment", 1, 250],
		]);
		expect(regular.line_items[2]?.description).toBe("Minimum commitment top-up");
		expect(regular.amount).toBe(500);

		// 450,000 late tokens: usage 600 + base 100 = 700 ≥ 500. +450 usage, −250 top-up → +200; total 700.
		await sendActions([{ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 450000 } }]);
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(supplementary.kind).toBe("supplementary");
		expect(linesOf(supplementary)).toEqual([
			["tokens", 450000, 450],
			["minimum_commitment", -1, -250],
		]);
		expect(supplementary.amount).toBe(200);
		expect(supplementary.line_items[1]?.description).toBe("Minimum commitment top-up — adjustment");

		// Nothing new: nothing billed, the top-up is not charged again.
		expect((await generate(currentPeriod(), account.id)).invoices).toEqual([]);
		const simulated = await post("/v1/pricing/simulate", { rate_plan_id: created.id, usage: { tokens: 0 } });
		expect(
			simulated.body.charges.map((c: { metric: string; amount: number }) => [c.metric, c.amount]),
		).toEqual([
			["base_fee", 100],
			["tokens", 0],
			["minimum_commitment", 400],
		]);
		expect(simulated.body.total).toBe(500);
	});
});

describe("minimum_amount on rate plans", () => {
	it("defaults to 0, is returned, and refuses negatives, non-numbers and more than 12 decimals", async () => {
		const plain = await post("/v1/pricing/rate-plans", { name: "No minimum", charges: [] });
		expect(plain.status).toBe(201);
		expect(plain.body.minimum_amount).toBe(0);
		const withMinimum = await post("/v1/pricing/rate-plans", {
			name: "Min",
			minimum_amount: 500,
			charges: [],
		});
		expect(withMinimum.body.minimum_amount).toBe(500);
		expect((await get(`/v1/pricing/rate-plans/${withMinimum.body.id}`)).body.minimum_amount).toBe(500);
		for (const minimum_amount of [-1, "500", 0.0000000000001, null]) {
			const bad = await post("/v1/pricing/rate-plans", { name: "Bad", minimum_amount, charges: [] });
			expect(bad.status, JSON.stringify(minimum_amount)).toBe(400);
			expect(bad.body.error.code).toBe("validation_error");
			expect(bad.body.error.details.map((d: { path: string }) => d.path)).toContain("minimum_amount");
		}
	});

	it("reserves the metric name minimum_commitment", async () => {
		const bad = await post("/v1/pricing/rate-plans", {
			name: "Bad",
			charges: [
				{
					metric: "minimum_commitment",
					source: { kind: "action", type: "x", aggregate: "count" },
					model: "per_unit",
					unit_price: 1,
				},
			],
		});
		expect(bad.status).toBe(400);
		expect(bad.body.error.details[0].path).toBe("charges[0].metric");
	});
});
