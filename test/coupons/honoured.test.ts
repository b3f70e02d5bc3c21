/**
 * Negotiated prices and discounts are honoured beyond invoices (docs/discounts.md): amount alerts rate usage at
 * the subscription's prices, the balance's pending usage is the discounted amount, and revenue by product and by
 * agent adds up the discounted invoice under the plan.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, createAgent, get, post } from "../helpers";
import { actions, createPlan, currentPeriod, generateOne, sdkKey, sendActions } from "../invoicing/fixtures";
import { subscriptionAccumulator, uniqueKey } from "../subscriptions/fixtures";

const calls = {
	metric: "calls",
	source: { kind: "action", type: "llm_call", aggregate: "count" },
	model: "per_unit",
	unit_price: 1,
};

async function subscribed(currency: string, overrides: unknown[]) {
	const plan = await createPlan({ currency, base_fee: 10, charges: [calls] });
	const account = await createAccount(undefined, { currency });
	const keys = [uniqueKey()];
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: keys,
		price_overrides: overrides,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { plan, account, keys, subscription: response.body as { id: string } };
}

describe("negotiated prices and discounts outside invoices", () => {
	it("amount alerts rate usage at the subscription's negotiated prices", async () => {
		const { subscription, keys } = await subscribed("USD", [
			{ metric: "calls", model: "per_unit", unit_price: 0.5 },
		]);
		const alert = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 16 });
		expect(alert.status).toBe(201);
		// 10 calls: 10 + 10 × 0.5 = 15 < 16 (the list price would make 20).
		await sendActions(actions(keys[0] as string, "llm_call", 10));
		await subscriptionAccumulator(subscription.id).flush();
		expect((await get(`/v1/alerts/${alert.body.id}`)).body.status).toBe("armed");
		// 2 more: 16 ≥ 16.
		await sendActions(actions(keys[0] as string, "llm_call", 2));
		await subscriptionAccumulator(subscription.id).flush();
		expect((await get(`/v1/alerts/${alert.body.id}`)).body.status).toBe("triggered");
		const { results } = await env.DB.prepare(
			"SELECT json_extract(data, '$.value') AS value FROM webhook_events WHERE event = 'alert.triggered' AND json_extract(data, '$.alert_id') = ?",
		)
			.bind(alert.body.id)
			.all<{ value: number }>();
		expect(results).toEqual([{ value: 16 }]);
	});

	it("the balance's pending usage is the discounted amount at negotiated prices", async () => {
		const { account, subscription, keys } = await subscribed("USD", [
			{ metric: "calls", model: "per_unit", unit_price: 2 },
		]);
		await post("/v1/coupons", { code: `B${subscription.id.slice(-8)}`, percent_off: 50, duration: "once" });
		const applied = await post(`/v1/subscriptions/${subscription.id}/discounts`, {
			code: `B${subscription.id.slice(-8)}`,
		});
		expect(applied.status).toBe(201);
		await sendActions(actions(keys[0] as string, "llm_call", 5));
		// (10 + 5 × 2) × 50 % = 10.
		const balance = await get(`/v1/accounts/${account.id}/balance`);
		expect(balance.body).toMatchObject({ pending_usage: 10, projected: -10 });
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`, { key: await sdkKey() });
		expect(usage.body.total).toBe(10);
	});

	it("revenue by product and by agent adds up the discounted invoice, under the plan", async () => {
		const { plan, account, subscription, keys } = await subscribed("CHF", [
			{ metric: "calls", model: "per_unit", unit_price: 3 },
		]);
		const agent = await createAgent();
		expect((await post(`/v1/agents/${agent.id}/instances`, { key: keys[0] })).status).toBe(200);
		await post("/v1/coupons", {
			code: `R${subscription.id.slice(-8)}`,
			amount_off: 4,
			currency: "CHF",
			duration: "forever",
		});
		await post(`/v1/subscriptions/${subscription.id}/discounts`, { code: `R${subscription.id.slice(-8)}` });
		await sendActions(actions(keys[0] as string, "llm_call", 2));
		const invoice = await generateOne(currentPeriod(), account.id);
		// 10 + 2 × 3 − 4 = 12.
		expect(invoice.amount).toBe(12);
		const range = `start_date=${currentPeriod()}-01&end_date=${new Date().toISOString().slice(0, 10)}&currency=CHF`;
		const byProduct = await get(`/v1/reports/revenue?${range}&group_by=product`);
		expect(byProduct.body.revenue).toBe(12);
		expect(byProduct.body.breakdown).toEqual([{ id: plan.id, name: "Plan", revenue: 12 }]);
		const byAgent = await get(`/v1/reports/revenue?${range}&group_by=agent`);
		expect(byAgent.body.revenue).toBe(12);
		const rows = byAgent.body.breakdown as { id: string | null; revenue: number }[];
		expect(rows.find((row) => row.id === agent.id)?.revenue).toBe(6);
		expect(rows.reduce((sum, row) => sum + row.revenue, 0)).toBe(12);
	});
});
