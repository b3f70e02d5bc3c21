/**
 * POST /v1/pricing/simulate with a subscription_id quotes what the period's invoice bills: the discount that covers
 * the current period adds the same line, after the minimum commitment's top-up (docs/discounts.md).
 */
import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { actions, currentPeriod, customer, generateOne, linesOf, sendActions } from "../invoicing/fixtures";

const plan = {
	base_fee: 99,
	charges: [
		{
			metric: "calls",
			description: "Calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.1285,
		},
	],
};

async function discounted(fields: Record<string, unknown>, planFields: Record<string, unknown> = {}) {
	const { account, subscription, instances } = await customer({ ...plan, ...planFields });
	const code = `S${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
	expect((await post("/v1/coupons", { code, duration: "forever", ...fields })).status).toBe(201);
	expect((await post(`/v1/subscriptions/${subscription.id}/discounts`, { code })).status).toBe(201);
	return { account, subscription, instance: instances[0] as string };
}

async function simulate(subscriptionId: string, calls: number) {
	const response = await post("/v1/pricing/simulate", { subscription_id: subscriptionId, usage: { calls } });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as {
		total: number;
		charges: { metric: string; quantity: number; amount: number }[];
	};
}

describe("POST /v1/pricing/simulate {subscription_id} with a discount", () => {
	it.each([
		// 99 + 1649 × 0.1285 = 310.8965 → 310.90; 20 % off = 62.18 → 248.72.
		["20 % off", { percent_off: 20 }, {}, -62.18, 248.72],
		// 99 + 211.90 = 310.90; USD 50.00 off → 260.90.
		["USD 50 off", { amount_off: 50, currency: "USD" }, {}, -50, 260.9],
		// Below the minimum of 400: the top-up comes first, then 12.5 % off 400 = 50 → 350.
		["12.5 % off after the minimum's top-up", { percent_off: 12.5 }, { minimum_amount: 400 }, -50, 350],
		// More off than the period's sum: never below zero.
		["USD 500 off, more than the sum", { amount_off: 500, currency: "USD" }, {}, -310.9, 0],
	])("%s: the quote is the invoice's amount, line for line", async (_, coupon, planFields, off, total) => {
		const { account, subscription, instance } = await discounted(coupon, planFields);
		const quote = await simulate(subscription.id, 1649);
		expect(quote.charges.at(-1)).toEqual({
			metric: "discount",
			model: "flat",
			quantity: 1,
			billable_quantity: 1,
			amount: off,
		});
		expect(quote.total).toBe(total);

		await sendActions(actions(instance, "llm_call", 1649));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(quote.total);
		expect(linesOf(invoice)).toEqual(quote.charges.map((c) => [c.metric, c.quantity, c.amount]));
	});

	it("has no discount line for a subscription without one, nor with a rate_plan_id", async () => {
		const { subscription, plan: ratePlan } = await customer(plan);
		expect((await simulate(subscription.id, 10)).charges.map((c) => c.metric)).toEqual(["base_fee", "calls"]);
		const byPlan = await post("/v1/pricing/simulate", { rate_plan_id: ratePlan.id, usage: { calls: 10 } });
		expect(byPlan.body.total).toBe(100.29);
	});
});
