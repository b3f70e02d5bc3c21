/**
 * Shards of a hot subscription (issue #14): a subscription with `shards: N` is counted by N accumulators, an
 * instance always by the shard its key hashes to. Whatever N, it must bill, read and alert exactly as one
 * accumulator would: the same events sent to a sharded and to an unsharded subscription give the same invoice.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
	accumulatorName,
	accumulatorStub,
	fnv1a,
	shardOf,
	subscriptionAccumulators,
} from "../../src/durable-objects/usage-accumulator/handle";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { createAccount, expectError, get, patch, post } from "../helpers";
import { createPlan, currentPeriod, generateOne, instanceKey, sdkKey } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "./fixtures";

const SHARDS = 4;

const plan = {
	currency: "USD",
	base_fee: 5,
	charges: [
		{
			metric: "tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "tiered",
			tiers: [
				{ up_to: 5000, unit_price: 0.001 },
				{ up_to: null, unit_price: 0.0005 },
			],
		},
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
			included_quantity: 3,
		},
		{
			metric: "gpt4o_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model: "gpt-4o" } },
			model: "per_unit",
			unit_price: 0.5,
		},
		{
			metric: "peak_context",
			source: { kind: "action", type: "llm_call", aggregate: "max", field: "context" },
			model: "per_unit",
			unit_price: 0.0001,
		},
		{
			metric: "deals",
			source: { kind: "outcome", type: "deal", aggregate: "sum" },
			model: "percentage",
			percent: 10,
		},
		{
			metric: "best_deal",
			source: { kind: "outcome", type: "deal", aggregate: "max" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

/** `count` fresh instance keys that fall into at least `spread` different shards of N. */
function keysAcrossShards(count: number, spread: number): string[] {
	for (;;) {
		const keys = Array.from({ length: count }, () => instanceKey("hot"));
		if (new Set(keys.map((key) => shardOf(key, SHARDS))).size >= spread) return keys;
	}
}

async function subscription(keys: string[], shards?: number) {
	const ratePlan = await createPlan(plan);
	const account = await createAccount(undefined, { currency: "USD" });
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: ratePlan.id,
		agent_instance_ids: keys,
		...(shards === undefined ? {} : { shards }),
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; account_id: string; shards: number };
}

/** The same traffic for any list of six instances: i-th event of instance j has the same shape everywhere. */
function traffic(keys: string[], tag: string) {
	const actions: Record<string, unknown>[] = [];
	const outcomes: Record<string, unknown>[] = [];
	keys.forEach((key, j) => {
		for (let i = 0; i < 12; i++) {
			actions.push({
				agent_key: key,
				action_type: "llm_call",
				idempotency_key: `${tag}-a-${j}-${i}`,
				metadata: {
					model: i % 3 === 0 ? "gpt-4o" : "gpt-4o-mini",
					tokens: 100 * (j + 1) + i,
					context: 1000 * j + 37 * i,
				},
			});
		}
		outcomes.push({
			agent_key: key,
			outcome_type: "deal",
			value: 100 + 25 * j,
			idempotency_key: `${tag}-o-${j}`,
		});
	});
	return { actions, outcomes };
}

async function sendBatch(kind: "actions" | "outcomes", events: Record<string, unknown>[]) {
	const response = await post(`/v1/${kind}/batch`, { events }, { key: await sdkKey() });
	expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
	return response.body as { results: { status: string }[] };
}

async function sendTraffic(keys: string[], tag: string) {
	const { actions, outcomes } = traffic(keys, tag);
	await sendBatch("actions", actions);
	await sendBatch("outcomes", outcomes);
	// Every event again, with the same idempotency keys: all duplicates.
	const again = await sendBatch("actions", actions);
	expect(new Set(again.results.map((r) => r.status))).toEqual(new Set(["duplicate"]));
	const againOutcomes = await sendBatch("outcomes", outcomes);
	expect(new Set(againOutcomes.results.map((r) => r.status))).toEqual(new Set(["duplicate"]));
	return actions.length + outcomes.length;
}

describe("sharded subscriptions", () => {
	it("bill, read and list exactly what one accumulator would, for the same events", async () => {
		const hotKeys = keysAcrossShards(6, 3);
		const plainKeys = Array.from({ length: 6 }, () => instanceKey("plain"));
		const hot = await subscription(hotKeys, SHARDS);
		const plain = await subscription(plainKeys);
		expect(hot.shards).toBe(SHARDS);
		expect(plain.shards).toBe(1);
		expect((await get(`/v1/subscriptions/${hot.id}`)).body.shards).toBe(SHARDS);

		const sent = await sendTraffic(hotKeys, "hot");
		expect(await sendTraffic(plainKeys, "plain")).toBe(sent);

		// The events really were spread: each instance's events are in its own shard, none elsewhere.
		const names = subscriptionAccumulators("live", hot.id, SHARDS);
		expect(names[1]).toBe(`live:sub:${hot.id}~1`);
		const perShard = await Promise.all(
			names.map((name) => accumulatorStub(env, name).usage("2000-01-01", "2999-12-31")),
		);
		const shardsWithEvents = perShard.filter((rows) => rows.some((row) => row.count > 0)).length;
		expect(shardsWithEvents).toBe(new Set(hotKeys.map((key) => shardOf(key, SHARDS))).size);
		expect(shardsWithEvents).toBeGreaterThanOrEqual(3);
		for (const key of hotKeys) {
			const shard = shardOf(key, SHARDS);
			for (const [k, name] of names.entries()) {
				const rows = await accumulatorStub(env, name).usage("2000-01-01", "2999-12-31", key);
				expect(rows.length > 0, `${key} in shard ${k}`).toBe(k === shard);
			}
		}

		// Real-time usage by subscription, merged over the shards.
		const period = currentPeriod();
		const usageOf = async (id: string) => {
			const response = await get(`/v1/usage?subscription_id=${id}&billing_period=${period}`);
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			const { usage, charges, total } = response.body;
			return { usage, charges, total };
		};
		const hotUsage = await usageOf(hot.id);
		expect(hotUsage).toEqual(await usageOf(plain.id));
		expect(hotUsage.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 72, value: null },
			{ kind: "outcome", type: "deal", count: 6, value: 975 },
		]);

		// The explorer lists every event once, newest first, across the shards.
		const events = await get(`/v1/events?subscription_id=${hot.id}&limit=100`);
		expect(events.status, JSON.stringify(events.body)).toBe(200);
		expect(events.body.events).toHaveLength(sent);
		expect(new Set(events.body.events.map((e: { id: string }) => e.id)).size).toBe(sent);
		const listed: string[] = events.body.events.map((e: { timestamp: string; id: string }) =>
			JSON.stringify([e.timestamp, e.id]),
		);
		expect(listed).toEqual([...listed].sort().reverse());
		const page = await get(`/v1/events?subscription_id=${hot.id}&limit=50`);
		const rest = await get(`/v1/events?subscription_id=${hot.id}&limit=50&cursor=${page.body.next_cursor}`);
		expect([...page.body.events, ...rest.body.events].map((e: { id: string }) => e.id)).toEqual(
			events.body.events.map((e: { id: string }) => e.id),
		);

		// The upcoming invoice flushes every shard before it reads D1.
		const upcoming = async (id: string) => {
			const response = await get(`/v1/invoices/upcoming?subscription_id=${id}`);
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			return { lines: response.body.line_items, amount: response.body.amount };
		};
		const hotUpcoming = await upcoming(hot.id);
		expect(hotUpcoming.lines.length).toBe(plan.charges.length + 1);
		expect(hotUpcoming.amount).toBeGreaterThan(5);
		expect(hotUpcoming).toEqual(await upcoming(plain.id));

		// The invoices: identical lines and totals.
		const hotInvoice = await generateOne(period, hot.account_id);
		const plainInvoice = await generateOne(period, plain.account_id);
		expect(hotInvoice.line_items).toEqual(plainInvoice.line_items);
		expect(hotInvoice.amount).toBe(plainInvoice.amount);
		expect(hotInvoice.amount).toBeGreaterThan(5);
		// D1 holds each shard's rows apart, under its own accumulator, all for the one subscription.
		const { results } = await env.DB.prepare(
			"SELECT DISTINCT accumulator FROM usage_daily WHERE subscription_id = ? ORDER BY accumulator",
		)
			.bind(hot.id)
			.all<{ accumulator: string }>();
		expect(results.map((row) => row.accumulator)).toEqual(
			names.filter((_, k) => (perShard[k] ?? []).length > 0),
		);
	});

	it("keeps dedupe exact when an instance moves into and out of a sharded subscription", async () => {
		const [moving, other] = keysAcrossShards(2, 2) as [string, string];
		const plain = await subscription([moving]);
		const hot = await subscription([other], SHARDS);
		const send = (key: string) =>
			post("/v1/actions", { agent_key: moving, action_type: "llm_call", idempotency_key: key });

		const before = await send("m1");
		expect(before.status).toBe(201);
		expect(before.body.subscription_id).toBe(plain.id);
		// Out of the unsharded subscription, into the sharded one.
		expect(
			(await patch(`/v1/subscriptions/${plain.id}`, { agent_instance_ids: [instanceKey()] })).status,
		).toBe(200);
		expect((await patch(`/v1/subscriptions/${hot.id}`, { agent_instance_ids: [other, moving] })).status).toBe(
			200,
		);
		const replay = await send("m1");
		expect(replay.status).toBe(200);
		expect(replay.body.id).toBe(before.body.id);
		const inHot = await send("m2");
		expect(inHot.status).toBe(201);
		expect(inHot.body.subscription_id).toBe(hot.id);
		// Counted by the instance's shard, and only there.
		const shard = accumulatorName("live", { subscriptionId: hot.id, shard: shardOf(moving, SHARDS) });
		expect(await accumulatorStub(env, shard).holdings()).toContainEqual(
			expect.objectContaining({ agentKey: moving, held: true }),
		);

		// Out of the sharded subscription: its keys travel on to the instance's own accumulator.
		expect((await patch(`/v1/subscriptions/${hot.id}`, { agent_instance_ids: [other] })).status).toBe(200);
		for (const key of ["m1", "m2"]) {
			const again = await send(key);
			expect(again.status, key).toBe(200);
		}
		expect((await send("m3")).body.subscription_id).toBeNull();
		const usage = await get(`/v1/usage?agent_key=${moving}`);
		expect(usage.body.usage).toEqual([{ kind: "action", type: "llm_call", count: 3, value: null }]);
	});

	it("alerts on the sum of the shards: the head evaluates what the others report after their flush", async () => {
		const keys = keysAcrossShards(4, 4);
		const hot = await subscription(keys, SHARDS);
		// Each instance makes 4 gpt-4o calls: the four together 16 ≥ 13, any three 12 < 13.
		const alert = await post("/v1/alerts", {
			subscription_id: hot.id,
			metric: "gpt4o_calls",
			threshold: 13,
			block: true,
		});
		expect(alert.status, JSON.stringify(alert.body)).toBe(201);
		const names = subscriptionAccumulators("live", hot.id, SHARDS);
		// The shards flush (and report) when the test runs their alarms, not on their own meanwhile.
		for (const name of names) {
			await runInDurableObject(accumulatorStub(env, name), (instance: UsageAccumulator) => {
				instance.settings.flushDelayMs = 60_000;
			});
		}
		const calls = keys.flatMap((key) =>
			Array.from({ length: 4 }, () => ({
				agent_key: key,
				action_type: "llm_call",
				metadata: { model: "gpt-4o" },
			})),
		);
		await sendBatch("actions", calls);
		const head = accumulatorStub(env, names[0] as string);
		const entitled = async () => (await get(`/v1/entitlements?agent_key=${keys[0]}`)).body.allowed;
		// Only the head's own instances are known to it until the other shards flush.
		expect(await entitled(), "before").toBe(true);
		for (const name of names.slice(1, 3)) {
			expect(await runDurableObjectAlarm(accumulatorStub(env, name)), name).toBe(true);
		}
		expect(await entitled(), "two of three").toBe(true);
		expect(await runDurableObjectAlarm(accumulatorStub(env, names[3] as string))).toBe(true);
		expect(await entitled(), "all").toBe(false);
		expect(await head.blockedBy()).toEqual([alert.body.id]);
		await head.flush();
		const read = await get(`/v1/alerts/${alert.body.id}`);
		expect(read.body).toMatchObject({ status: "triggered" });
		const { results } = await env.DB.prepare(
			"SELECT data FROM webhook_events WHERE event = 'alert.triggered' AND json_extract(data, '$.alert_id') = ?",
		)
			.bind(alert.body.id)
			.all<{ data: string }>();
		expect(results.map((row) => JSON.parse(row.data))).toMatchObject([
			{ value: 16, subscription_id: hot.id },
		]);
	});

	it("judges a margin alert on the costs of all shards, as they report them", async () => {
		const keys = keysAcrossShards(4, 4);
		const hot = await subscription(keys, SHARDS);
		// One call of cost 3 per instance. Revenue: base fee 5, 4 calls with 3 included → 5.01. Costs 12: a margin
		// of (5.01 − 12) / 5.01 = −139.52 % < −100 %; any three shards' 9 against 5.00 make only −80 %.
		const alert = await post("/v1/alerts", { subscription_id: hot.id, type: "margin", threshold: -100 });
		expect(alert.status, JSON.stringify(alert.body)).toBe(201);
		const names = subscriptionAccumulators("live", hot.id, SHARDS);
		for (const name of names) {
			await runInDurableObject(accumulatorStub(env, name), (instance: UsageAccumulator) => {
				instance.settings.flushDelayMs = 60_000;
			});
		}
		await sendBatch(
			"actions",
			keys.map((key) => ({ agent_key: key, action_type: "llm_call", metadata: { cost: 3 } })),
		);
		const head = accumulatorStub(env, names[0] as string);
		const triggered = async () => {
			await head.flush();
			const { results } = await env.DB.prepare(
				"SELECT data FROM webhook_events WHERE event = 'alert.triggered' AND json_extract(data, '$.alert_id') = ?",
			)
				.bind(alert.body.id)
				.all<{ data: string }>();
			return results.map((row) => JSON.parse(row.data));
		};
		for (const name of names.slice(1, 3)) {
			expect(await runDurableObjectAlarm(accumulatorStub(env, name)), name).toBe(true);
		}
		expect(await triggered(), "three of four").toEqual([]);
		expect(await runDurableObjectAlarm(accumulatorStub(env, names[3] as string))).toBe(true);
		expect(await triggered()).toMatchObject([
			{ type: "margin", revenue: 5.01, costs: 12, margin_percent: -139.52, subscription_id: hot.id },
		]);
	});

	it("is set at creation only, within 1–64, and never with a unique_count charge", async () => {
		const hot = await subscription([instanceKey()], 2);
		const refused = expectError(
			await patch(`/v1/subscriptions/${hot.id}`, { shards: 4 }),
			400,
			"validation_error",
		);
		expect(JSON.stringify(refused)).toMatch(/shards/);
		expect(JSON.stringify(refused)).toMatch(/cannot be changed/);
		expect((await get(`/v1/subscriptions/${hot.id}`)).body.shards).toBe(2);

		const ratePlan = await createPlan(plan);
		const account = await createAccount(undefined, { currency: "USD" });
		for (const shards of [0, 65, 1.5, "4"]) {
			const response = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: ratePlan.id,
				agent_instance_ids: [instanceKey()],
				shards,
			});
			expectError(response, 400, "validation_error");
		}

		const distinct = await createPlan({
			currency: "USD",
			charges: [
				{
					metric: "users",
					source: { kind: "action", type: "llm_call", aggregate: "unique_count", field: "user_id" },
					model: "per_unit",
					unit_price: 1,
				},
			],
		});
		const conflict = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: distinct.id,
			agent_instance_ids: [instanceKey()],
			shards: 2,
		});
		expect(expectError(conflict, 409, "conflict").message).toMatch(/unique_count/);
		// Nor may a sharded subscription change to such a plan.
		const change = await patch(`/v1/subscriptions/${hot.id}`, { rate_plan_id: distinct.id });
		expect(change.status).toBe(409);
		// One shard is the plain accumulator of before: the name of unsharded subscriptions is unchanged.
		expect(subscriptionAccumulators("live", "sub_x", 1)).toEqual(["live:sub:sub_x"]);
		const plainAccumulator = subscriptionAccumulator(hot.id);
		expect(await plainAccumulator.holdings()).toEqual([]);
	});

	it("hashes keys with FNV-1a, stably", () => {
		// Reference values of 32-bit FNV-1a.
		expect(fnv1a("")).toBe(0x811c9dc5);
		expect(fnv1a("a")).toBe(0xe40c292c);
		expect(fnv1a("foobar")).toBe(0xbf9cf968);
		expect(shardOf("anything", 1)).toBe(0);
		const counts = new Array(SHARDS).fill(0);
		for (let i = 0; i < 4000; i++) counts[shardOf(`agent-${i}`, SHARDS)]++;
		for (const count of counts) expect(count).toBeGreaterThan(800);
	});
});
