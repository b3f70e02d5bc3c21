/**
 * Edge cases of prices, margins and reservations, from the documented behaviour only: cost-plus plans through the
 * API, model resolution without a provider, environments, reservations that end, and margin alerts as webhooks see
 * them.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_KEY, call, createKey, del, expectError, get, post } from "../helpers";
import { currentPeriod, customer, sdkKey } from "../invoicing/fixtures";
import { clockAt, exactSum, flush } from "../reports/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";

const DAY = 86_400_000;
const uid = () => crypto.randomUUID().slice(0, 8);
const yesterday = () => new Date(Date.now() - DAY).toISOString();

const costPlus = (markup: number, extra: Record<string, unknown> = {}) => ({
	name: "Cost plus",
	charges: [
		{
			metric: "llm_cost",
			source: { kind: "action", type: "llm_call", aggregate: "cost" },
			model: "cost_plus",
			markup_percent: markup,
			...extra,
		},
	],
});

describe("cost-plus plans", () => {
	it("takes markup_percent 0–10000 on a cost source of actions only", async () => {
		for (const markup of [0, 10000, 12.5]) {
			const r = await post("/v1/pricing/rate-plans", costPlus(markup));
			expect(r.status, JSON.stringify(r.body)).toBe(201);
		}
		for (const plan of [
			costPlus(-1),
			costPlus(10000.5),
			costPlus(10, { source: { kind: "outcome", type: "x", aggregate: "cost" } }),
			costPlus(10, { source: { kind: "action", type: "llm_call", aggregate: "count" } }),
		]) {
			expectError(await post("/v1/pricing/rate-plans", plan), 400, "validation_error");
		}
	});

	it("simulates the cost as the metric's usage with the markup on top, included_quantity an amount of cost", async () => {
		const plan = await post("/v1/pricing/rate-plans", costPlus(25, { included_quantity: 1 }));
		const sim = await post("/v1/pricing/simulate", {
			rate_plan_id: plan.body.id,
			usage: { llm_cost: 3.333 },
		});
		expect(sim.status, JSON.stringify(sim.body)).toBe(200);
		// (3.333 − 1) × 1.25 = 2.91625 → 2.92
		expect(sim.body.total).toBe(2.92);
	});

	it("bills the events' costs in the plan's currency, filtered by model, with the markup", async () => {
		const model = `acc-${uid()}`;
		await post("/v1/model-prices", {
			provider: "acme",
			model,
			per_request: 0.1,
			effective_from: yesterday(),
		});
		const { subscription, instances } = await customer(
			costPlus(50, { source: { kind: "action", type: "llm_call", aggregate: "cost", filter: { model } } }),
		);
		const key = await sdkKey();
		const agentKey = instances[0];
		for (const metadata of [
			{ model, input_tokens: 1 },
			{ model, input_tokens: 1 },
			{ model: "other", cost: 5 },
			{ model, cost: 1 },
			{ model, cost: 7, cost_currency: "EUR" },
		]) {
			const r = await post(
				"/v1/actions",
				{ agent_key: agentKey, action_type: "llm_call", metadata },
				{ key },
			);
			expect(r.status).toBe(201);
		}
		await flush({ subscriptions: [subscription.id] });
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		// (0.1 + 0.1 + 1) × 1.5 = 1.8
		expect(usage.body.total, JSON.stringify(usage.body)).toBe(1.8);
	});
});

describe("costing: which price", () => {
	it("a model of two providers is unpriced without a provider, priced with one", async () => {
		const model = `acc-${uid()}`;
		await post("/v1/model-prices", { provider: "acme", model, per_request: 1, effective_from: yesterday() });
		await post("/v1/model-prices", { provider: "bolt", model, per_request: 2, effective_from: yesterday() });
		const { subscription, instances } = await customer(costPlus(0));
		const key = await sdkKey();
		for (const metadata of [
			{ model, input_tokens: 5 },
			{ model, provider: "bolt", output_tokens: 5 },
			{ model, provider: "nobody", output_tokens: 7 },
		]) {
			await post("/v1/actions", { agent_key: instances[0], action_type: "llm_call", metadata }, { key });
		}
		await flush({ subscriptions: [subscription.id] });
		const costs = await get(`/v1/costs?model=${model}`);
		expect(costs.body.total).toBe(2);
		const unpriced = await get(`/v1/costs/unpriced?billing_period=${currentPeriod()}`);
		const rows = unpriced.body.models.filter((m: { model: string }) => m.model === model);
		expect(rows).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ provider: null, events: 1, input_tokens: 5 }),
				expect.objectContaining({ provider: "nobody", events: 1, output_tokens: 7 }),
			]),
		);
		expect(rows).toHaveLength(2);
	});

	it("a custom price of the test environment never prices live events", async () => {
		const model = `acc-${uid()}`;
		const testAdmin = await createKey("admin", "test");
		const r = await post(
			"/v1/model-prices",
			{ provider: "acme", model, per_request: 1, effective_from: yesterday() },
			{ key: testAdmin },
		);
		expect(r.status).toBe(201);
		expectError(await del(`/v1/model-prices/${r.body.id}`), 404, "not_found");
		const { subscription, instances } = await customer(costPlus(0));
		await post(
			"/v1/actions",
			{ agent_key: instances[0], action_type: "llm_call", metadata: { model, input_tokens: 1 } },
			{ key: await sdkKey() },
		);
		await flush({ subscriptions: [subscription.id] });
		expect((await get(`/v1/costs?model=${model}`)).body.count).toBe(0);
		const live = await get(`/v1/model-prices?model=${model}`);
		expect(live.body.total).toBe(0);
	});

	it("deleting a custom price re-rates its events back to unpriced", async () => {
		const model = `acc-${uid()}`;
		const price = await post("/v1/model-prices", {
			provider: "acme",
			model,
			per_request: 1,
			effective_from: yesterday(),
		});
		const { subscription, instances } = await customer(costPlus(0));
		await post(
			"/v1/actions",
			{ agent_key: instances[0], action_type: "llm_call", metadata: { model, input_tokens: 1 } },
			{ key: await sdkKey() },
		);
		await flush({ subscriptions: [subscription.id] });
		expect((await get(`/v1/costs?model=${model}`)).body.total).toBe(1);
		expect((await del(`/v1/model-prices/${price.body.id}`)).status).toBe(204);
		let total = -1;
		for (let i = 0; i < 50 && total !== 0; i++) {
			await flush({ subscriptions: [subscription.id] });
			total = (await get(`/v1/costs?model=${model}`)).body.total;
			if (total !== 0) await new Promise((resolve) => setTimeout(resolve, 100));
		}
		expect(total).toBe(0);
		const unpriced = await get(`/v1/costs/unpriced?billing_period=${currentPeriod()}`);
		expect(unpriced.body.models).toContainEqual(expect.objectContaining({ model, events: 1 }));
	});
});

describe("re-rating within a minute", () => {
	afterEach(() => {
		vi.useRealTimers();
	});

	it("re-rates a call that reached D1 just after a new price looked for it, with no further event", async () => {
		const model = `late-${uid()}`;
		const { subscription, instances } = await customer(costPlus(0));
		const sent = await post(
			"/v1/actions",
			{ agent_key: instances[0], action_type: "llm_call", metadata: { model, input_tokens: 1_000_000 } },
			{ key: await sdkKey() },
		);
		expect(sent.status).toBe(201);
		// The price is created while the call is still only in its accumulator: the notice finds nothing in D1.
		const price = await post("/v1/model-prices", {
			provider: "acme",
			model,
			input_per_million: 3,
			effective_from: yesterday(),
		});
		expect(price.status).toBe(201);
		await new Promise((resolve) => setTimeout(resolve, 300));
		// Its alarm flushes it then, at the prices it holds (read with the call, before the new one).
		const stub = subscriptionAccumulator(subscription.id);
		expect(await runDurableObjectAlarm(stub), "the flush").toBe(true);
		const query = `model=${model}`;
		expect((await get(`/v1/costs?${query}`)).body.total).toBe(0);

		// 31 s on, with no event and no other call, the accumulator's own alarm applies the price.
		const now = Date.now();
		clockAt(new Date(now + 31_000).toISOString());
		expect(await runDurableObjectAlarm(stub), "the re-check").toBe(true);
		expect((await get(`/v1/costs?${query}`)).body.costs).toEqual([
			expect.objectContaining({ model, amount: 3, source: "model_prices" }),
		]);
		const unpriced = await get("/v1/costs/unpriced");
		expect(unpriced.body.models.map((m: { model: string }) => m.model)).not.toContain(model);
		// Once nothing changes, the alarm is not armed again.
		clockAt(new Date(now + 65_000).toISOString());
		expect(await runDurableObjectAlarm(stub), "the last re-check").toBe(true);
		expect(await runDurableObjectAlarm(stub)).toBe(false);
	});
});

describe("reservations: what counts and how they end", () => {
	it("ignores non-blocking alerts and alerts on a metric; a read-only key reads the entitlement budget", async () => {
		const { subscription, instances } = await customer({ base_fee: 10, charges: costPlus(0).charges });
		const agentKey = instances[0] as string;
		await post("/v1/alerts", { subscription_id: subscription.id, threshold: 10.5 });
		await post("/v1/alerts", {
			subscription_id: subscription.id,
			threshold: 1,
			metric: "base_fee",
			block: true,
		});
		const r = await post("/v1/reservations", { agent_key: agentKey, amount: 100 });
		expect(r.status, JSON.stringify(r.body)).toBe(201);
		expect(r.body).toMatchObject({
			amount: 100,
			currency: "USD",
			subscription_id: subscription.id,
			agent_key: agentKey,
		});
		const ent = await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await createKey("read-only") });
		expect(ent.body.budget).toBeNull();
	});

	it("a settled hold cannot be released (409) and an over-precise amount is 400", async () => {
		const { subscription, instances } = await customer({ base_fee: 1, charges: costPlus(0).charges });
		const agentKey = instances[0] as string;
		expectError(
			await post("/v1/reservations", { agent_key: agentKey, amount: 0.0000000000001 }),
			400,
			"validation_error",
		);
		const hold = await post("/v1/reservations", { agent_key: agentKey, amount: 1 });
		await post(
			"/v1/actions",
			{ agent_key: agentKey, action_type: "x", metadata: { reservation_id: hold.body.id } },
			{ key: await sdkKey() },
		);
		await flush({ subscriptions: [subscription.id] });
		expect((await get(`/v1/reservations/${hold.body.id}`)).body.status).toBe("settled");
		expectError(await post(`/v1/reservations/${hold.body.id}/release`), 409, "conflict");
	});

	it("a test-environment key sees a live reservation as 404", async () => {
		const { instances } = await customer({ base_fee: 1, charges: costPlus(0).charges });
		const hold = await post("/v1/reservations", { agent_key: instances[0], amount: 1 });
		const testKey = await createKey("read-write", "test");
		expectError(await get(`/v1/reservations/${hold.body.id}`, { key: testKey }), 404, "not_found");
		expectError(
			await post(`/v1/reservations/${hold.body.id}/release`, undefined, { key: testKey }),
			404,
			"not_found",
		);
	});
});

describe("margins of one subscription", () => {
	it("group_by agent, customer and product each sum exactly to the totals", async () => {
		const period = currentPeriod();
		for (const groupBy of ["agent", "customer", "product", "model"]) {
			const r = await get(`/v1/reports/margins?billing_period=${period}&group_by=${groupBy}`);
			expect(r.status).toBe(200);
			const rows = r.body.breakdown as Record<"revenue" | "costs" | "margin", number>[];
			for (const field of ["revenue", "costs", "margin"] as const) {
				expect(exactSum(rows.map((row) => row[field]))).toBe(exactSum([r.body[field]]));
			}
			for (const row of r.body.breakdown) {
				expect(Object.keys(row).sort()).toEqual([
					"costs",
					"id",
					"margin",
					"margin_percent",
					"name",
					"revenue",
				]);
			}
		}
	});

	it("mcp get_margins with a bad group_by is an isError 400 result", async () => {
		const r = await call("POST", "/mcp", {
			body: {
				jsonrpc: "2.0",
				id: 1,
				method: "tools/call",
				params: { name: "get_margins", arguments: { billing_period: currentPeriod(), group_by: "plan" } },
			},
			headers: { Accept: "application/json, text/event-stream" },
			key: ADMIN_KEY,
		});
		expect(r.body.result.isError).toBe(true);
		expect(JSON.parse(r.body.result.content[0].text).error.code).toBe("validation_error");
	});
});
