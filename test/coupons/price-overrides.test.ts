/**
 * Negotiated prices (docs/discounts.md#negotiated-prices): price_overrides on create apply from the start, on
 * PATCH from the next billing period (pending until then), and every place that rates the subscription honours
 * them — real-time usage, simulate, upcoming and issued invoices.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addPeriods } from "../../src/lib/time";
import { ADMIN_KEY, createAccount, expectError, get, patch, post } from "../helpers";
import { actions, currentPeriod, generateOne, linesOf, sdkKey, sendActions } from "../invoicing/fixtures";
import { createPlan, standardCharges, uniqueKey } from "../subscriptions/fixtures";

async function subscribeWith(body: Record<string, unknown>) {
	const account = await createAccount(ADMIN_KEY);
	const plan = await createPlan();
	const keys = [uniqueKey()];
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: keys,
		...body,
	});
	return { account, plan, keys, response };
}

async function historyOf(subscriptionId: string) {
	const { results } = await env.DB.prepare(
		"SELECT effective_period, rate_plan_id, price_overrides FROM subscription_plans WHERE subscription_id = ? ORDER BY effective_period",
	)
		.bind(subscriptionId)
		.all<{ effective_period: string; rate_plan_id: string; price_overrides: string | null }>();
	return results;
}

/** Lets a month pass for the plan history: every row moves one period back. */
async function passOneMonth(subscriptionId: string) {
	const rows = await historyOf(subscriptionId);
	for (const row of rows) {
		await env.DB.prepare(
			"UPDATE subscription_plans SET effective_period = ?1 WHERE subscription_id = ?2 AND effective_period = ?3",
		)
			.bind(addPeriods(row.effective_period, -1), subscriptionId, row.effective_period)
			.run();
	}
}

const cheaperTokens = { metric: "tokens", model: "per_unit", unit_price: 0.0005 };

describe("price overrides on create", () => {
	it("apply from the start: the subscription shows them and usage, simulate and invoices use them", async () => {
		const { account, plan, keys, response } = await subscribeWith({ price_overrides: [cheaperTokens] });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		const subscription = response.body;
		expect(subscription.price_overrides).toEqual([cheaperTokens]);
		expect(subscription.pending_price_overrides).toBeNull();
		expect(subscription.discount).toBeNull();
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.price_overrides).toEqual([cheaperTokens]);

		await sendActions(actions(keys[0] as string, "llm_call", 4, { tokens: 1000 }));
		// 4000 tokens at 0.0005 = 2 (the plan says 0.001: 4); 4 calls, 2 free, at 0.01 = 0.02; base fee 10.
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`, { key: await sdkKey() });
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(usage.body.charges.map((c: { metric: string; amount: number }) => [c.metric, c.amount])).toEqual([
			["base_fee", 10],
			["tokens", 2],
			["calls", 0.02],
			["hires", 0],
		]);
		expect(usage.body.total).toBe(12.02);

		const simulated = await post("/v1/pricing/simulate", {
			subscription_id: subscription.id,
			usage: { tokens: 4000, calls: 4 },
		});
		expect(simulated.status, JSON.stringify(simulated.body)).toBe(200);
		expect(simulated.body).toMatchObject({
			rate_plan_id: plan.id,
			subscription_id: subscription.id,
			total: 12.02,
		});
		const listPrice = await post("/v1/pricing/simulate", {
			rate_plan_id: plan.id,
			usage: { tokens: 4000, calls: 4 },
		});
		expect(listPrice.body.total).toBe(14.02);

		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(upcoming.body.amount).toBe(12.02);

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 10],
			["tokens", 4000, 2],
			["calls", 4, 0.02],
			["hires", 0, 0],
		]);
		expect(invoice.rate_plan_id).toBe(plan.id);
	});

	it("keep the plan's included quantity unless they give one", async () => {
		const { response } = await subscribeWith({
			price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 0.02 }],
		});
		expect(response.status).toBe(201);
		const simulated = await post("/v1/pricing/simulate", {
			subscription_id: response.body.id,
			usage: { calls: 5 },
		});
		// 5 calls, the plan's 2 free, at 0.02.
		expect(simulated.body.charges.find((c: { metric: string }) => c.metric === "calls")).toMatchObject({
			billable_quantity: 3,
			amount: 0.06,
		});
	});

	it.each([
		[
			"an unknown metric",
			[{ metric: "nope", model: "per_unit", unit_price: 1 }],
			"price_overrides[0].metric",
		],
		[
			"a model its source cannot feed",
			[{ metric: "tokens", model: "percentage", percent: 5 }],
			"price_overrides[0].model",
		],
		[
			"invalid model fields",
			[{ metric: "tokens", model: "per_unit", unit_price: -1 }],
			"price_overrides[0].unit_price",
		],
		["fields of another model", [{ metric: "tokens", model: "per_unit", percent: 1 }], "price_overrides[0]"],
		["a metric twice", [cheaperTokens, cheaperTokens], "price_overrides[1].metric"],
		["a source", [{ ...cheaperTokens, source: standardCharges[0]?.source }], "price_overrides[0]"],
	])("refuse %s with 400 and store nothing", async (_, overrides, path) => {
		const account = await createAccount(ADMIN_KEY);
		const before = await env.DB.prepare("SELECT count(*) AS n FROM subscriptions WHERE account_id = ?")
			.bind(account.id)
			.first<{ n: number }>();
		const plan = await createPlan();
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
			price_overrides: overrides,
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
		const after = await env.DB.prepare("SELECT count(*) AS n FROM subscriptions WHERE account_id = ?")
			.bind(account.id)
			.first<{ n: number }>();
		expect(after?.n).toBe(before?.n);
	});
});

describe("price overrides on PATCH", () => {
	it("apply from the next period: pending until then, then applied", async () => {
		const { response, keys } = await subscribeWith({});
		const id = response.body.id as string;
		expect(response.body.price_overrides).toEqual([]);

		const changed = await patch(`/v1/subscriptions/${id}`, { price_overrides: [cheaperTokens] });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body).toMatchObject({
			price_overrides: [],
			pending_price_overrides: [cheaperTokens],
			pending_rate_plan_id: null,
		});
		expect((await get(`/v1/subscriptions/${id}`)).body).toMatchObject({
			price_overrides: [],
			pending_price_overrides: [cheaperTokens],
			pending_rate_plan_id: null,
		});
		const rows = await historyOf(id);
		expect(rows).toHaveLength(2);
		expect(rows[1]?.effective_period).toBe(addPeriods(currentPeriod(), 1));

		// This period stays at the plan's prices.
		await sendActions(actions(keys[0] as string, "llm_call", 1, { tokens: 1000 }));
		const now = await post("/v1/pricing/simulate", { subscription_id: id, usage: { tokens: 1000 } });
		expect(now.body.total).toBe(11);

		// Next month the negotiated price is in effect.
		await passOneMonth(id);
		const later = await get(`/v1/subscriptions/${id}`);
		expect(later.body).toMatchObject({ price_overrides: [cheaperTokens], pending_price_overrides: null });
		const next = await post("/v1/pricing/simulate", { subscription_id: id, usage: { tokens: 1000 } });
		expect(next.body.total).toBe(10.5);
	});

	it("setting the current prices again withdraws the pending ones; an unknown metric is refused", async () => {
		const { response } = await subscribeWith({ price_overrides: [cheaperTokens] });
		const id = response.body.id as string;
		const pending = await patch(`/v1/subscriptions/${id}`, { price_overrides: [] });
		expect(pending.body).toMatchObject({ price_overrides: [cheaperTokens], pending_price_overrides: [] });
		const withdrawn = await patch(`/v1/subscriptions/${id}`, { price_overrides: [cheaperTokens] });
		expect(withdrawn.body.pending_price_overrides).toBeNull();
		expect(await historyOf(id)).toHaveLength(1);

		const refused = await patch(`/v1/subscriptions/${id}`, {
			price_overrides: [{ metric: "nope", model: "per_unit", unit_price: 1 }],
		});
		expectError(refused, 400, "validation_error");
		expect(await historyOf(id)).toHaveLength(1);
		expect((await get(`/v1/subscriptions/${id}`)).body.pending_price_overrides).toBeNull();
	});

	it("a plan change without overrides starts the new plan at its own prices", async () => {
		const { response } = await subscribeWith({ price_overrides: [cheaperTokens] });
		const id = response.body.id as string;
		const other = await createPlan({ base_fee: 20 });
		const changed = await patch(`/v1/subscriptions/${id}`, { rate_plan_id: other.id });
		expect(changed.body).toMatchObject({ pending_rate_plan_id: other.id, pending_price_overrides: [] });
		// Withdrawing the plan change withdraws its prices too: nothing is pending.
		const withdrawn = await patch(`/v1/subscriptions/${id}`, { rate_plan_id: response.body.rate_plan_id });
		expect(withdrawn.body).toMatchObject({ pending_rate_plan_id: null, pending_price_overrides: null });
		expect(await historyOf(id)).toHaveLength(1);
		const withPrices = await patch(`/v1/subscriptions/${id}`, {
			rate_plan_id: other.id,
			price_overrides: [cheaperTokens],
		});
		expect(withPrices.body).toMatchObject({ pending_rate_plan_id: other.id, pending_price_overrides: null });
		await passOneMonth(id);
		const simulated = await post("/v1/pricing/simulate", { subscription_id: id, usage: { tokens: 1000 } });
		expect(simulated.body).toMatchObject({ rate_plan_id: other.id, total: 20.5 });
	});
});

describe("simulate with a subscription", () => {
	it("needs exactly one of rate_plan_id and subscription_id; an unknown subscription is 404", async () => {
		const plan = await createPlan();
		expectError(await post("/v1/pricing/simulate", { usage: {} }), 400, "validation_error");
		expectError(
			await post("/v1/pricing/simulate", { rate_plan_id: plan.id, subscription_id: "sub_x", usage: {} }),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/pricing/simulate", { subscription_id: "sub_unknown", usage: {} }),
			404,
			"not_found",
		);
		const { response } = await subscribeWith({});
		expectError(
			await post("/v1/pricing/simulate", { subscription_id: response.body.id, usage: { nope: 1 } }),
			400,
			"validation_error",
		);
	});
});
