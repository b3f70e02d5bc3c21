/**
 * Black-box checks of §37's pricing amendments, from the contract's text and docs/discounts.md and
 * docs/model-prices.md alone: simulate with a subscription_id applies its discount as the invoice does (§27), and
 * one model name everywhere (§22/§23): a dated snapshot is its own model for charges' filters, cost records,
 * GET /v1/costs?model= and the margins by model.
 */
import { describe, expect, it } from "vitest";
import { createAccount, get, post } from "../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generateOne,
	instanceKey,
	sendActions,
	subscribe,
} from "../invoicing/fixtures";
import { flush } from "../reports/fixtures";

describe("§37 (§27): simulate {subscription_id} applies the subscription's discount as its invoice does", () => {
	const plan = {
		base_fee: 20,
		charges: [
			{
				metric: "calls",
				source: { kind: "action", type: "call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.5,
			},
		],
	};

	it.each([
		["percent_off 33 (rounded once: 33% of 23.50 = 7.755 → 7.76)", { percent_off: 33 }, -7.76, 15.74],
		["amount_off USD 5", { amount_off: 5, currency: "USD" }, -5, 18.5],
		["amount_off USD 50, more than the lines (never below 0)", { amount_off: 50, currency: "USD" }, -23.5, 0],
	])("%s", async (_label, couponFields, discountAmount, total) => {
		const ratePlan = await createPlan(plan);
		const account = await createAccount();
		const agentKey = instanceKey();
		const subscription = await subscribe(account.id, ratePlan.id, [agentKey]);
		const code = `C${crypto.randomUUID().slice(0, 8)}`;
		const coupon = await post("/v1/coupons", { code, duration: "forever", ...couponFields });
		expect(coupon.status, JSON.stringify(coupon.body)).toBe(201);
		const discount = await post(`/v1/subscriptions/${subscription.id}/discounts`, {
			coupon_id: coupon.body.id,
		});
		expect(discount.status, JSON.stringify(discount.body)).toBe(201);

		const simulated = await post("/v1/pricing/simulate", {
			subscription_id: subscription.id,
			usage: { calls: 7 },
		});
		expect(simulated.status, JSON.stringify(simulated.body)).toBe(200);

		await sendActions(actions(agentKey, "call", 7));
		const invoice = await generateOne(currentPeriod(), account.id);
		const invoiceDiscount = invoice.line_items.find((line) => line.metric === "discount");
		expect(invoiceDiscount?.amount).toBe(discountAmount);
		expect(invoice.amount).toBe(total);

		const simulatedDiscount = simulated.body.charges.find((c: { metric: string }) => c.metric === "discount");
		expect(simulatedDiscount, JSON.stringify(simulated.body.charges)).toMatchObject({
			amount: discountAmount,
		});
		expect(simulated.body.total).toBe(invoice.amount);
		// Every line of the invoice is a charge of the simulation, with the same amount.
		const byMetric = Object.fromEntries(
			simulated.body.charges.map((c: { metric: string; amount: number }) => [c.metric, c.amount]),
		);
		for (const line of invoice.line_items) expect(byMetric[line.metric], line.metric).toBe(line.amount);
	});
});

describe("§37 (§22/§23): a model is named the same way everywhere; a dated snapshot is its own model", () => {
	const FAMILY = "gpt-4o";
	const SNAPSHOT = "gpt-4o-2024-08-06";
	const costCharge = (metric: string, model: string) => ({
		metric,
		source: { kind: "action", type: "llm_call", aggregate: "cost", filter: { model } },
		model: "cost_plus",
		markup_percent: 0,
	});
	const call = (model: string) => ({
		provider: "openai",
		model,
		input_tokens: 1_000_000,
		output_tokens: 100_000,
	});

	it("charge filter, cost records, GET /v1/costs?model= and margins by model agree on each name", async () => {
		const ratePlan = await createPlan({
			charges: [costCharge("family_cost", FAMILY), costCharge("snapshot_cost", SNAPSHOT)],
		});
		const account = await createAccount();
		const agentKey = instanceKey();
		const subscription = await subscribe(account.id, ratePlan.id, [agentKey]);
		await sendActions([
			...actions(agentKey, "llm_call", 2, call(FAMILY)),
			...actions(agentKey, "llm_call", 3, call(SNAPSHOT)),
		]);
		await flush({ subscriptions: [subscription.id] });

		const today = new Date().toISOString().slice(0, 10);
		const range = `customer_id=${account.id}&start_date=${currentPeriod()}-01&end_date=${today}`;
		const costs = async (query: string) => {
			const response = await get(`/v1/costs?${range}${query}&limit=100`);
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			return response.body as { costs: { model: string | null; amount: number }[]; total: number };
		};
		const family = await costs(`&model=${FAMILY}`);
		const snapshot = await costs(`&model=${SNAPSHOT}`);
		const all = await costs("");
		// gpt-4o at 2.50 / 10.00 per million: 2.5 + 1.0 = 3.5 a call, two calls.
		expect(family.total).toBe(7);
		expect(family.costs.every((c) => c.model === FAMILY)).toBe(true);
		expect(snapshot.total, JSON.stringify(all.costs)).toBeGreaterThan(0);
		expect(snapshot.costs.every((c) => c.model === SNAPSHOT)).toBe(true);
		expect(all.costs.map((c) => c.model).sort()).toEqual([FAMILY, SNAPSHOT]);

		// The charges bill exactly what the cost records of their model hold.
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		const charge = (metric: string) =>
			usage.body.charges.find((c: { metric: string }) => c.metric === metric) as {
				quantity: number;
				amount: number;
			};
		expect(charge("family_cost").quantity).toBe(family.total);
		expect(charge("family_cost").amount).toBe(7);
		expect(charge("snapshot_cost").quantity).toBe(snapshot.total);
		expect(charge("snapshot_cost").amount).toBe(Math.round(snapshot.total * 100) / 100);

		// Margins by model put each name's costs and its charge's revenue on the same row.
		const margins = await get(`/v1/reports/margins?billing_period=${currentPeriod()}&group_by=model`);
		expect(margins.status, JSON.stringify(margins.body)).toBe(200);
		const row = (name: string) =>
			margins.body.breakdown.find(
				(r: { id: string | null; name: string }) => r.id === name || r.name === name,
			);
		expect(row(FAMILY), JSON.stringify(margins.body.breakdown)).toMatchObject({ costs: 7, revenue: 7 });
		expect(row(SNAPSHOT), JSON.stringify(margins.body.breakdown)).toMatchObject({
			costs: snapshot.total,
			revenue: charge("snapshot_cost").amount,
		});
	});
});
