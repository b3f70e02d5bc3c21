/**
 * Costing at ingest (docs/model-prices.md): LLM calls priced from the model prices by the accumulators, into cost
 * records with their model; explicit metadata.cost wins; calls of a model without a price listed as unpriced.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_KEY, createKey, del, expectError, get, post } from "../helpers";
import { actions, currentPeriod, customer, generateOne, linesOf, sendActions } from "../invoicing/fixtures";
import { agentWith, clockAt, customerNamed, flush } from "../reports/fixtures";

const plan = {
	name: "Calls",
	currency: "USD",
	charges: [
		{
			metric: "llm_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.1,
		},
	],
};

// 1,000 input, 500 output and 200 cached input tokens of gpt-4o (2.5 / 10 / 1.25 per million):
// (2,500 + 5,000 + 250) / 1,000,000 = 0.00775 each.
const GPT4O_CALL = { model: "gpt-4o", input_tokens: 1000, output_tokens: 500, cached_input_tokens: 200 };

afterEach(() => {
	vi.useRealTimers();
});

async function costsOf(query: string) {
	const response = await get(`/v1/costs?${query}`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as { costs: Record<string, unknown>[]; total: number; count: number };
}

describe("costing LLM calls at ingest", () => {
	it("prices gpt-4o tokens exactly into a cost record with its model; an explicit cost wins", async () => {
		clockAt("2026-06-10T09:00:00.000Z");
		const customer = await customerNamed("Priced Co", plan, 1);
		const [key] = customer.instances as [string];
		const agent = await agentWith("Priced agent", [key]);
		await sendActions([
			...actions(key, "llm_call", 3, GPT4O_CALL),
			...actions(key, "llm_call", 2, { ...GPT4O_CALL, cost: 0.5, cost_type: "openai" }),
		]);
		await flush({ subscriptions: [customer.subscription.id] });

		const list = await costsOf(`agent_id=${agent.id}&start_date=2026-06-01&end_date=2026-06-30`);
		const priced = list.costs.filter((c) => c.source === "model_prices");
		expect(priced).toEqual([
			expect.objectContaining({
				agent_id: agent.id,
				customer_id: customer.account.id,
				cost_type: "llm_tokens",
				model: "gpt-4o",
				amount: 0.02325,
				currency: "USD",
				period: "2026-06",
			}),
		]);
		const explicit = list.costs.filter((c) => c.source === "events");
		expect(explicit).toEqual([expect.objectContaining({ cost_type: "openai", model: null, amount: 1 })]);
		expect(list.total).toBe(1.02325);

		const byModel = await costsOf(`model=gpt-4o&start_date=2026-06-01&end_date=2026-06-30`);
		expect(byModel.costs.map((c) => c.model)).toEqual(["gpt-4o"]);
		expect(byModel.total).toBe(0.02325);
		const none = await costsOf(`model=nope&start_date=2026-06-01&end_date=2026-06-30`);
		expect(none.count).toBe(0);
	});

	it("lists a model without a price as unpriced, with its token sums, and records no cost", async () => {
		clockAt("2026-07-10T09:00:00.000Z");
		const customer = await customerNamed("Unpriced Co", plan, 1);
		const [key] = customer.instances as [string];
		await agentWith("Unpriced agent", [key]);
		await sendActions([
			...actions(key, "llm_call", 2, { model: "house-model-7", input_tokens: 100.5, output_tokens: 40 }),
			...actions(key, "llm_call", 1, {
				model: "house-model-7",
				provider: "acme",
				reasoning_tokens: 7,
			}),
		]);
		await flush({ subscriptions: [customer.subscription.id] });

		const readOnly = await createKey("read-only");
		const unpriced = await get("/v1/costs/unpriced?billing_period=2026-07", { key: readOnly });
		expect(unpriced.status, JSON.stringify(unpriced.body)).toBe(200);
		expect(unpriced.body).toEqual({
			billing_period: "2026-07",
			models: [
				{
					provider: null,
					model: "house-model-7",
					events: 2,
					input_tokens: 201,
					output_tokens: 80,
					cached_input_tokens: 0,
					reasoning_tokens: 0,
				},
				{
					provider: "acme",
					model: "house-model-7",
					events: 1,
					input_tokens: 0,
					output_tokens: 0,
					cached_input_tokens: 0,
					reasoning_tokens: 7,
				},
			].sort((a, b) => (a.provider ?? "").localeCompare(b.provider ?? "")),
		});
		const list = await costsOf("start_date=2026-07-01&end_date=2026-07-31");
		expect(list.costs.filter((c) => c.source === "model_prices")).toEqual([]);

		const other = await get("/v1/costs/unpriced?billing_period=2026-08");
		expect(other.body).toEqual({ billing_period: "2026-08", models: [] });
		expectError(await get("/v1/costs/unpriced?billing_period=2026-13"), 400, "validation_error");
		expectError(await get("/v1/costs/unpriced?billing_period=2026-07&x=1"), 400, "validation_error");
	});

	it("uses a custom price once the accumulator's prices refresh (30 s at most), re-pricing calls from its start", async () => {
		clockAt("2026-08-10T09:00:00.000Z");
		const customer = await customerNamed("Custom Co", plan, 1);
		const [key] = customer.instances as [string];
		await agentWith("Custom agent", [key]);
		const call = { model: "house-model-8", input_tokens: 1_000_000 };
		await sendActions(actions(key, "llm_call", 1, call));
		const created = await post(
			"/v1/model-prices",
			{ provider: "acme", model: "house-model-8", input_per_million: 2, output_per_million: 4 },
			{ key: ADMIN_KEY },
		);
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		// 31 s later the accumulator reads its environment's custom prices again.
		clockAt("2026-08-10T09:00:31.000Z");
		await sendActions(actions(key, "llm_call", 1, call));
		await flush({ subscriptions: [customer.subscription.id] });

		// The price starts at its creation (09:00:00.000), when the first call was made: both cost 2.
		const list = await costsOf("model=house-model-8&start_date=2026-08-01&end_date=2026-08-31");
		expect(list.costs).toEqual([expect.objectContaining({ model: "house-model-8", amount: 4 })]);
		const unpriced = await get("/v1/costs/unpriced?billing_period=2026-08");
		expect(unpriced.body.models).toEqual([]);
	});
});

describe("cost-plus billing of model costs", () => {
	it("bills gpt-4o's cost + 25 %, rounded once per line, in usage and on the regular invoice", async () => {
		const { account, subscription, instances } = await customer(
			{
				name: "GPT-4o at cost + 25 %",
				currency: "USD",
				charges: [
					{
						metric: "gpt4o",
						source: { kind: "action", type: "llm_call", aggregate: "cost", filter: { model: "gpt-4o" } },
						model: "cost_plus",
						markup_percent: 25,
					},
				],
			},
			{ instances: 2 },
		);
		const [a, b] = instances as [string, string];
		// (1,234,567 × 2.5 + 45,678 × 10) / 1,000,000 = 3.5431975 a call; 3 calls = 10.6295925;
		// × 1.25 = 13.286990625 → 13.29. The claude call and the EUR cost are not gpt-4o's in USD.
		const call = { model: "gpt-4o", input_tokens: 1_234_567, output_tokens: 45_678 };
		await sendActions([
			...actions(a, "llm_call", 2, call),
			...actions(b, "llm_call", 1, call),
			...actions(b, "llm_call", 1, { model: "claude-sonnet-4-5", input_tokens: 1000 }),
			...actions(b, "llm_call", 1, { ...call, cost: 7, cost_currency: "EUR" }),
		]);
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		const line = usage.body.charges.find((c: { metric: string }) => c.metric === "gpt4o");
		expect(line).toMatchObject({ quantity: 10.6295925, amount: 13.29 });
		expect(usage.body.total).toBe(13.29);

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)).toEqual([["gpt4o", 10.6295925, 13.29]]);
		expect(invoice.amount).toBe(13.29);
	});
});

describe("re-rating when a custom price is created or deleted", () => {
	it("re-prices the calls kept from its effective_from on: costs, unpriced calls and cost-plus usage", async () => {
		clockAt("2026-09-10T09:00:00.000Z");
		const { subscription, instances } = await customer(
			{
				name: "House model at cost + 10 %",
				currency: "USD",
				charges: [
					{
						metric: "house_cost",
						source: { kind: "action", type: "llm_call", aggregate: "cost" },
						model: "cost_plus",
						markup_percent: 10,
					},
				],
			},
			{ instances: 1 },
		);
		const [key] = instances as [string];
		const call = { model: "house-model-9", input_tokens: 1_000_000 };
		const early = {
			agent_key: key,
			action_type: "llm_call",
			metadata: call,
			timestamp: "2026-09-02T10:00:00Z",
		};
		await sendActions([early, ...actions(key, "llm_call", 1, call)]);
		const usageLine = async () => {
			const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
			expect(usage.status, JSON.stringify(usage.body)).toBe(200);
			return usage.body.charges.find((c: { metric: string }) => c.metric === "house_cost");
		};
		expect(await usageLine()).toMatchObject({ quantity: 0, amount: 0 });

		const created = await post("/v1/model-prices", {
			provider: "acme",
			model: "house-model-9",
			input_per_million: 3,
			effective_from: "2026-09-05T00:00:00Z",
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		clockAt("2026-09-10T09:00:31.000Z");
		await sendActions(actions(key, "llm_call", 1, call));
		await flush({ subscriptions: [subscription.id] });

		// The call of 2 September stays unpriced (before effective_from); the two others cost 3 each.
		let costs = await costsOf("model=house-model-9&start_date=2026-09-01&end_date=2026-09-30");
		expect(costs.costs).toEqual([expect.objectContaining({ amount: 6, source: "model_prices" })]);
		let unpriced = await get("/v1/costs/unpriced?billing_period=2026-09");
		expect(unpriced.body.models).toEqual([
			expect.objectContaining({ model: "house-model-9", events: 1, input_tokens: 1_000_000 }),
		]);
		// 6 × 1.10 = 6.60
		expect(await usageLine()).toMatchObject({ quantity: 6, amount: 6.6 });

		expect((await del(`/v1/model-prices/${created.body.id}`)).status).toBe(204);
		clockAt("2026-09-10T09:01:02.000Z");
		await sendActions(actions(key, "llm_call", 1, call));
		await flush({ subscriptions: [subscription.id] });

		costs = await costsOf("model=house-model-9&start_date=2026-09-01&end_date=2026-09-30");
		expect(costs.costs).toEqual([]);
		unpriced = await get("/v1/costs/unpriced?billing_period=2026-09");
		expect(unpriced.body.models).toEqual([
			expect.objectContaining({ model: "house-model-9", events: 4, input_tokens: 4_000_000 }),
		]);
		expect(await usageLine()).toMatchObject({ quantity: 0, amount: 0 });
	});

	it("adds a later call to the re-rated amount, not to the one its accumulator counted before", async () => {
		clockAt("2026-08-10T09:00:00.000Z");
		const price = (input: number, from: string) =>
			post("/v1/model-prices", {
				provider: "acme",
				model: "house-model-11",
				input_per_million: input,
				effective_from: from,
			});
		expect((await price(3, "2026-08-01T00:00:00Z")).status).toBe(201);
		const { subscription, instances } = await customer(plan, { instances: 1 });
		const [key] = instances as [string];
		const call = { model: "house-model-11", input_tokens: 1_000_000 };
		// One call at a time: the second adds to the amount the accumulator kept in memory after the first.
		await sendActions(actions(key, "llm_call", 1, call));
		await sendActions(actions(key, "llm_call", 1, call));
		await flush({ subscriptions: [subscription.id] });
		const query = "model=house-model-11&start_date=2026-08-01&end_date=2026-08-31";
		expect((await costsOf(query)).costs).toEqual([expect.objectContaining({ amount: 6 })]);

		// From 5 August on the price is 5: both calls are re-rated to 5, and a third adds 5 to that.
		expect((await price(5, "2026-08-05T00:00:00Z")).status).toBe(201);
		clockAt("2026-08-10T09:00:31.000Z");
		await sendActions(actions(key, "llm_call", 1, call));
		await flush({ subscriptions: [subscription.id] });
		expect((await costsOf(query)).costs).toEqual([expect.objectContaining({ amount: 15 })]);
	});

	it("tells the accumulators at once: an idle one re-rates within seconds, with no new event", async () => {
		clockAt("2026-10-10T09:00:00.000Z");
		const { subscription, instances } = await customer(plan, { instances: 1 });
		const [key] = instances as [string];
		await sendActions(actions(key, "llm_call", 2, { model: "house-model-10", output_tokens: 500_000 }));
		await flush({ subscriptions: [subscription.id] });
		const period = "billing_period=2026-10";
		expect((await get(`/v1/costs/unpriced?${period}`)).body.models).toEqual([
			expect.objectContaining({ model: "house-model-10", events: 2 }),
		]);

		const created = await post("/v1/model-prices", {
			provider: "acme",
			model: "house-model-10",
			output_per_million: 5,
			effective_from: "2026-10-01T00:00:00Z",
		});
		expect(created.status).toBe(201);
		// The clock stands still: only the notice can make the accumulator read its prices again.
		const query = "model=house-model-10&start_date=2026-10-01&end_date=2026-10-31";
		let costs = await costsOf(query);
		for (let i = 0; i < 100 && costs.total !== 5; i++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			costs = await costsOf(query);
		}
		expect(costs.costs).toEqual([expect.objectContaining({ model: "house-model-10", amount: 5 })]);
		expect((await get(`/v1/costs/unpriced?${period}`)).body.models).toEqual([]);
	});
});
