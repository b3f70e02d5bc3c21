import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { PlanBook } from "../../src/durable-objects/usage-accumulator/parts/period-plans";
import type { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import { createAgent, get, post } from "../helpers";
import { currentPeriod, customer, generate, generateOne, linesOf, sdkKey } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";

// Charge filters and the max / unique_count aggregations (§16), end to end: the accumulator counts what the
// plan needs, real-time usage and invoices read it, and agent shares follow it. Every amount is computed by hand.
const plan = {
	base_fee: 0,
	charges: [
		{
			metric: "gpt4o_tokens",
			source: {
				kind: "action",
				type: "llm_call",
				aggregate: "sum",
				field: "tokens",
				filter: { model: "gpt-4o" },
			},
			model: "per_unit",
			unit_price: 0.01,
		},
		{
			metric: "mini_tokens",
			source: {
				kind: "action",
				type: "llm_call",
				aggregate: "sum",
				field: "tokens",
				filter: { model: ["gpt-4o-mini", "gpt-4o-mini-2024"] },
			},
			model: "per_unit",
			unit_price: 0.001,
		},
		{
			metric: "premium_calls",
			source: {
				kind: "action",
				type: "llm_call",
				aggregate: "count",
				filter: { model: "gpt-4o", tier: "premium" },
			},
			model: "per_unit",
			unit_price: 1,
		},
		{
			metric: "peak_context",
			source: { kind: "action", type: "llm_call", aggregate: "max", field: "context" },
			model: "per_unit",
			unit_price: 0.0001,
		},
		{
			metric: "users",
			source: { kind: "action", type: "llm_call", aggregate: "unique_count", field: "user_id" },
			model: "per_unit",
			unit_price: 0.5,
		},
		{
			metric: "best_deal",
			source: { kind: "outcome", type: "deal", aggregate: "max" },
			model: "per_unit",
			unit_price: 0.1,
		},
		{
			metric: "all_tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "per_unit",
			unit_price: 0.0001,
		},
	],
};

async function send(events: Record<string, unknown>[], kind: "actions" | "outcomes" = "actions") {
	const response = await post(`/v1/${kind}/batch`, { events }, { key: await sdkKey() });
	expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
	return response;
}

const llm = (agent_key: string, metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
	agent_key,
	action_type: "llm_call",
	metadata,
	...extra,
});

async function setUp(ratePlan: Record<string, unknown> = plan) {
	const { account, subscription, instances } = await customer(ratePlan, { instances: 2 });
	const [a, b] = instances as [string, string];
	const agentA = await createAgent();
	const agentB = await createAgent();
	expect((await post(`/v1/agents/${agentA.id}/instances`, { key: a })).status).toBe(200);
	expect((await post(`/v1/agents/${agentB.id}/instances`, { key: b })).status).toBe(200);
	await send([
		llm(a, { model: "gpt-4o", tokens: 1000, context: 8000, user_id: "u1", tier: "premium" }),
		llm(a, { model: "gpt-4o-mini", tokens: 5000, context: 2000, user_id: "u2" }),
		llm(b, { model: "gpt-4o-mini-2024", tokens: 3000, context: 16000, user_id: "u1" }),
		// Matches no filter; user_id 42 is a distinct value ("42").
		llm(b, { model: "claude", tokens: 7000, context: 4000, user_id: 42 }),
		// No model at all: no filtered charge counts it.
		llm(b, { tokens: 2000, user_id: "u3" }),
		// gpt-4o without tokens: nothing to add; tier basic is no premium call; user_id null is no value.
		llm(a, { model: "gpt-4o", tier: "basic", user_id: null }),
	]);
	await send(
		[
			{ agent_key: a, outcome_type: "deal", value: 1200, metadata: { region: "eu" } },
			{ agent_key: b, outcome_type: "deal", value: 300, metadata: { region: "us" } },
		],
		"outcomes",
	);
	return { account, subscription, a, b, agentA, agentB };
}

// gpt4o_tokens 1,000 × 0.01 = 10.00; mini_tokens 5,000 + 3,000 = 8,000 × 0.001 = 8.00; premium_calls 1 × 1 = 1.00;
// peak_context max 16,000 × 0.0001 = 1.60; users u1, u2, 42, u3 = 4 × 0.5 = 2.00; best_deal max 1,200 × 0.1 = 120.00;
// all_tokens 1,000 + 5,000 + 3,000 + 7,000 + 2,000 = 18,000 × 0.0001 = 1.80. Total 144.40.
const expectedLines = [
	["gpt4o_tokens", 1000, 10],
	["mini_tokens", 8000, 8],
	["premium_calls", 1, 1],
	["peak_context", 16000, 1.6],
	["users", 4, 2],
	["best_deal", 1200, 120],
	["all_tokens", 18000, 1.8],
];

describe("filters, max and unique_count", () => {
	it("price each model × filter × aggregation in real-time usage and on the invoice, with agent shares", async () => {
		const { account, subscription, agentA, agentB } = await setUp();

		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status).toBe(200);
		expect(
			usage.body.charges.map((c: { metric: string; quantity: number; amount: number }) => [
				c.metric,
				c.quantity,
				c.amount,
			]),
		).toEqual(expectedLines);
		expect(usage.body.total).toBe(144.4);

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)).toEqual(expectedLines);
		expect(invoice.amount).toBe(144.4);

		const shares = new Map(
			(
				await env.DB.prepare("SELECT metric, agent_shares FROM invoice_lines WHERE invoice_id = ?1")
					.bind(invoice.id)
					.all<{ metric: string; agent_shares: string }>()
			).results.map((row) => [row.metric, JSON.parse(row.agent_shares)]),
		);
		const [first, second] = [agentA.id, agentB.id].sort();
		const byId = (parts: Record<string, number>) =>
			[first, second]
				.filter((id) => parts[id as string] !== undefined)
				.map((id) => ({ agent_id: id, quantity: String(parts[id as string]) }));
		expect(shares.get("gpt4o_tokens")).toEqual(byId({ [agentA.id]: 1000 }));
		expect(shares.get("mini_tokens")).toEqual(byId({ [agentA.id]: 5000, [agentB.id]: 3000 }));
		// A max belongs to the agent whose event reached it.
		expect(shares.get("peak_context")).toEqual(byId({ [agentB.id]: 16000 }));
		expect(shares.get("best_deal")).toEqual(byId({ [agentA.id]: 1200 }));
		// Each distinct user is the first sender's: u1, u2 → A; 42, u3 → B.
		expect(shares.get("users")).toEqual(byId({ [agentA.id]: 2, [agentB.id]: 2 }));

		const revenue = await get(
			`/v1/reports/revenue?start_date=${currentPeriod()}-01&end_date=${currentPeriod()}-28&group_by=agent`,
		);
		expect(revenue.status).toBe(200);
		const ofAgent = (id: string) =>
			revenue.body.breakdown.find((item: { id: string }) => item.id === id)?.revenue as number;
		// A: gpt-4o 10 + mini 5,000/8,000 × 8 = 5 + premium 1 + users 2/4 × 2 = 1 + best deal 120
		//    + all tokens 6,000/18,000 × 1.80 = 0.60 → 137.60
		// B: mini 3 + peak 1.60 + users 1 + all tokens 12,000/18,000 × 1.80 = 1.20 → 6.80 (sum 144.40)
		expect(ofAgent(agentA.id)).toBe(137.6);
		expect(ofAgent(agentB.id)).toBe(6.8);
	});

	it("a plan keeps its filters as sent, and simulates final quantities like any plan", async () => {
		const created = await post("/v1/pricing/rate-plans", { name: "Per model", minimum_amount: 100, ...plan });
		expect(created.status).toBe(201);
		expect(created.body.charges).toEqual(plan.charges);
		expect((await get(`/v1/pricing/rate-plans/${created.body.id}`)).body.charges).toEqual(plan.charges);
		const simulated = await post("/v1/pricing/simulate", {
			rate_plan_id: created.body.id,
			usage: { gpt4o_tokens: 1000, mini_tokens: 8000, users: 4, peak_context: 16000 },
		});
		expect(simulated.status).toBe(200);
		// 10 + 8 + 0 + 1.60 + 2 + 0 + 0 = 21.60, below the minimum of 100 → top-up 78.40
		expect(
			simulated.body.charges.map((c: { metric: string; amount: number }) => [c.metric, c.amount]),
		).toEqual([
			["gpt4o_tokens", 10],
			["mini_tokens", 8],
			["premium_calls", 0],
			["peak_context", 1.6],
			["users", 2],
			["best_deal", 0],
			["all_tokens", 0],
			["minimum_commitment", 78.4],
		]);
		expect(simulated.body.total).toBe(100);
	});

	it("every pricing model rates the filtered and aggregated quantities", async () => {
		const source = (metric: string) =>
			(plan.charges.find((charge) => charge.metric === metric) as { source: unknown }).source;
		const everyModel = {
			charges: [
				{ metric: "premium_calls", source: source("premium_calls"), model: "per_unit", unit_price: 1 },
				{ metric: "users", source: source("users"), model: "package", package_size: 3, package_price: 5 },
				{
					metric: "mini_tokens",
					source: source("mini_tokens"),
					model: "tiered",
					tiers: [
						{ up_to: 5000, unit_price: 0.001 },
						{ up_to: null, unit_price: 0.0005 },
					],
				},
				{
					metric: "peak_context",
					source: source("peak_context"),
					model: "volume",
					tiers: [
						{ up_to: 10000, unit_price: 0.0002 },
						{ up_to: null, unit_price: 0.0001, flat_fee: 1 },
					],
				},
				{
					metric: "eu_deals",
					source: { kind: "outcome", type: "deal", aggregate: "sum", filter: { region: "eu" } },
					model: "percentage",
					percent: 10,
				},
			],
		};
		const { account } = await setUp(everyModel);
		const invoice = await generateOne(currentPeriod(), account.id);
		// premium_calls 1 × 1 = 1.00; users 4 → ceil(4 / 3) = 2 packages × 5 = 10.00;
		// mini_tokens 8,000: 5,000 × 0.001 = 5.00 + 3,000 × 0.0005 = 1.50 → 6.50;
		// peak_context max 16,000 > 10,000: all at 0.0001 = 1.60 + flat 1 → 2.60; eu_deals 10 % of 1,200 = 120.00.
		expect(linesOf(invoice)).toEqual([
			["premium_calls", 1, 1],
			["users", 4, 10],
			["mini_tokens", 8000, 6.5],
			["peak_context", 16000, 2.6],
			["eu_deals", 1200, 120],
		]);
		expect(invoice.amount).toBe(140.1);
	});

	it("unique_count stays exact across two flushes and a crash before an answer", async () => {
		const { account, subscription, a, b } = await setUp();
		const stub = subscriptionAccumulator(subscription.id);
		await stub.flush();
		// u1 again (not new), u5 new.
		await send([llm(a, { user_id: "u1" }), llm(b, { user_id: "u5" })]);
		await stub.flush();

		// A crash while recording: the transaction fails after every write of the batch, so none of it stays.
		await runInDurableObject(stub, (instance: UsageAccumulator) => {
			const store = (instance as unknown as { store: { storage: DurableObjectStorage } }).store;
			const storage = store.storage;
			store.storage = Object.assign(Object.create(storage), {
				transactionSync: (work: () => unknown) =>
					storage.transactionSync(() => {
						work();
						throw new Error("crashed before answering");
					}),
			});
		});
		const retried = [
			llm(a, { user_id: "u6" }, { idempotency_key: "crash-1" }),
			llm(b, { user_id: "u2" }, { idempotency_key: "crash-2" }),
		];
		const crashed = await post("/v1/actions/batch", { events: retried }, { key: await sdkKey() });
		expect(crashed.status).toBeGreaterThanOrEqual(500);
		// The restarted object: its storage as it was, nothing learnt in memory.
		await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
			const store = (instance as unknown as { store: { storage: DurableObjectStorage } & AccumulatorStore })
				.store;
			store.storage = state.storage;
			store.metricQuantities.clear();
			(instance as unknown as { plans: PlanBook }).plans = new PlanBook(store, env);
		});
		await send(retried);
		await send(retried); // the client retries once more: duplicates
		await stub.flush();

		// users: u1, u2, 42, u3, u5, u6 = 6 × 0.5 = 3.00 (u1 and u2 again count nothing)
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.body.charges.find((c: { metric: string }) => c.metric === "users")).toMatchObject({
			quantity: 6,
			amount: 3,
		});
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice).find(([metric]) => metric === "users")).toEqual(["users", 6, 3]);
		const stored = await env.DB.prepare(
			"SELECT agent_key, quantity FROM usage_metrics WHERE subscription_id = ?1 AND source LIKE '%unique_count%' ORDER BY agent_key",
		)
			.bind(subscription.id)
			.all<{ agent_key: string; quantity: string }>();
		// A: u1, u2, u6; B: 42, u3, u5.
		expect(stored.results.map((row) => row.quantity)).toEqual(["3", "3"]);
	});

	it("max with a late event: a larger late value is billed as a supplementary difference, a smaller one is not", async () => {
		const { account, subscription, a } = await setUp();
		const regular = await generateOne(currentPeriod(), account.id);
		expect(linesOf(regular).find(([metric]) => metric === "peak_context")).toEqual([
			"peak_context",
			16000,
			1.6,
		]);

		// Late: timestamped just after the subscription started (earlier ones would not be billable, §19).
		const earlier = new Date(Date.parse(subscription.started_at) + 1).toISOString();
		await send([llm(a, { context: 12000 }, { timestamp: earlier })]);
		// 12,000 < 16,000: the max and every amount are unchanged; only all_tokens… no tokens either: nothing new.
		expect((await generate(currentPeriod(), account.id)).invoices).toEqual([]);

		await send([llm(a, { context: 20000 }, { timestamp: earlier })]);
		const supplementary = await generateOne(currentPeriod(), account.id);
		// max 20,000 × 0.0001 = 2.00, billed 1.60 → 0.40 for 4,000 more
		expect(linesOf(supplementary)).toEqual([["peak_context", 4000, 0.4]]);
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.body.charges.find((c: { metric: string }) => c.metric === "peak_context").quantity).toBe(
			20000,
		);
	});
});
