/**
 * §6: dedupe is scoped to (environment, event kind, agent_key) and holds when the instance moves between
 * accumulators — into a subscription, out of one (removal, cancellation), from one to another, back again —
 * with concurrent copies in flight and with a crash between the steps of a move.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import { forgetRoutes, rememberRoute } from "../../src/durable-objects/usage-accumulator/placement";
import { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import { createAccount, get, patch, post } from "../helpers";
import {
	createPlan,
	instanceAccumulator,
	sendAction,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

async function countOf(agentKey: string, kind: "action" | "outcome" = "action") {
	const usage = await get(`/v1/usage?agent_key=${agentKey}`);
	expect(usage.status).toBe(200);
	return usage.body.usage
		.filter((line: { kind: string }) => line.kind === kind)
		.reduce((sum: number, line: { count: number }) => sum + line.count, 0);
}

/** Sends the key again and expects the original event back, not counted. */
async function expectReplay(agentKey: string, idempotencyKey: string, original: { id: string }) {
	const repeat = await sendAction({ agent_key: agentKey, idempotency_key: idempotencyKey });
	expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
	expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
	expect(repeat.body.id).toBe(original.id);
	return repeat.body;
}

async function first(agentKey: string, idempotencyKey: string) {
	const response = await sendAction({ agent_key: agentKey, idempotency_key: idempotencyKey });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; subscription_id: string | null };
}

async function newSubscription(keys: string[]) {
	const account = await createAccount();
	const plan = await createPlan();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: keys,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; account_id: string };
}

const setInstances = async (subscriptionId: string, keys: string[]) =>
	expect((await patch(`/v1/subscriptions/${subscriptionId}`, { agent_instance_ids: keys })).status).toBe(200);

describe("dedupe across instance moves", () => {
	it("instance accumulator → subscription: a retry after the instance joined is a duplicate", async () => {
		const agentKey = uniqueKey();
		const original = await first(agentKey, "k1");
		expect(original.subscription_id).toBeNull();
		const subscription = await newSubscription([agentKey]);
		const replay = await expectReplay(agentKey, "k1", original);
		// The original event, as it was counted: outside any subscription.
		expect(replay.subscription_id).toBeNull();
		expect(await countOf(agentKey)).toBe(1);
		// A new key is counted by the subscription.
		expect((await first(agentKey, "k2")).subscription_id).toBe(subscription.id);
		await expectReplay(agentKey, "k2", {
			id: (await sendAction({ agent_key: agentKey, idempotency_key: "k2" })).body.id,
		});
		expect(await countOf(agentKey)).toBe(2);
	});

	it("subscription → instance accumulator on removal, and on cancellation", async () => {
		const removed = uniqueKey();
		const cancelled = uniqueKey();
		const { subscription } = await subscribe([removed, cancelled]);
		const a = await first(removed, "r1");
		const b = await first(cancelled, "c1");
		await setInstances(subscription.id, [cancelled]);
		await expectReplay(removed, "r1", a);
		expect((await post(`/v1/subscriptions/${subscription.id}/cancel`)).status).toBe(200);
		const replay = await expectReplay(cancelled, "c1", b);
		expect(replay.subscription_id).toBe(subscription.id);
		expect(await countOf(removed)).toBe(1);
		expect(await countOf(cancelled)).toBe(1);
	});

	it("subscription → subscription, and back through every kind of holder", async () => {
		const agentKey = uniqueKey();
		const keys: [string, { id: string }][] = [];
		const remember = async (key: string) => keys.push([key, await first(agentKey, key)]);
		const replayAll = async () => {
			for (const [key, original] of keys) await expectReplay(agentKey, key, original);
			expect(await countOf(agentKey)).toBe(keys.length);
		};
		await remember("own");
		const s1 = await newSubscription([agentKey]);
		await replayAll();
		await remember("in-s1");
		await setInstances(s1.id, [uniqueKey()]);
		await replayAll();
		const s2 = await newSubscription([agentKey]);
		await replayAll();
		await remember("in-s2");
		await setInstances(s2.id, [uniqueKey()]);
		await setInstances(s1.id, [agentKey]);
		await replayAll();
		await remember("in-s1-again");
		expect((await post(`/v1/subscriptions/${s1.id}/cancel`)).status).toBe(200);
		await replayAll();
		await remember("own-again");
		await newSubscription([agentKey]);
		await replayAll();
	});

	it("keeps outcome keys across a move too, apart from action keys", async () => {
		const agentKey = uniqueKey();
		const outcome = await sendOutcome({ agent_key: agentKey, idempotency_key: "o1", value: 3 });
		expect(outcome.status).toBe(201);
		await newSubscription([agentKey]);
		const repeat = await sendOutcome({ agent_key: agentKey, idempotency_key: "o1", value: 3 });
		expect(repeat.status).toBe(200);
		expect(repeat.body.id).toBe(outcome.body.id);
		// The same key as an action is another event.
		expect((await sendAction({ agent_key: agentKey, idempotency_key: "o1" })).status).toBe(201);
		expect(await countOf(agentKey, "outcome")).toBe(1);
	});

	it("scopes keys to the agent_key: two instances of one subscription may use the same key", async () => {
		const [one, two] = [uniqueKey(), uniqueKey()];
		await subscribe([one, two]);
		expect((await sendAction({ agent_key: one, idempotency_key: "same" })).status).toBe(201);
		expect((await sendAction({ agent_key: two, idempotency_key: "same" })).status).toBe(201);
		expect(await countOf(one)).toBe(1);
		expect(await countOf(two)).toBe(1);
	});

	it("counts once when many copies arrive while the instance moves", async () => {
		const agentKey = uniqueKey();
		const original = await first(agentKey, "burst-1");
		const account = await createAccount();
		const plan = await createPlan();
		const copies = Array.from({ length: 20 }, () =>
			sendAction({ agent_key: agentKey, idempotency_key: "burst-1" }),
		);
		// Copies of a key never sent before, racing the move: exactly one is counted.
		const fresh = Array.from({ length: 20 }, () =>
			sendAction({ agent_key: agentKey, idempotency_key: "burst-2" }),
		);
		const move = post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [agentKey],
		});
		const [replies, freshReplies, moved] = await Promise.all([Promise.all(copies), Promise.all(fresh), move]);
		expect(moved.status).toBe(201);
		expect(replies.map((r) => [r.status, r.body.id])).toEqual(replies.map(() => [200, original.id]));
		expect(freshReplies.filter((r) => r.status === 201)).toHaveLength(1);
		expect(new Set(freshReplies.map((r) => r.body.id)).size).toBe(1);
		// And once more after the move settled.
		await expectReplay(agentKey, "burst-2", freshReplies[0]?.body);
		expect(await countOf(agentKey)).toBe(2);
	});

	it("holds when the move's announcement was lost (a crash after the D1 write)", async () => {
		const agentKey = uniqueKey();
		const original = await first(agentKey, "lost-1");
		// The membership stored in D1 as createSubscription does, but no accumulator was told.
		const account = await createAccount();
		const plan = await createPlan();
		const subscriptionId = `sub_lost${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
		const now = new Date().toISOString();
		await env.DB.batch([
			env.DB.prepare(
				`INSERT INTO subscriptions (id, environment, account_id, rate_plan_id, pending_rate_plan_id, status, started_at,
					cancelled_at, created_at, updated_at) VALUES (?, 'live', ?, ?, NULL, 'active', ?, NULL, ?, ?)`,
			).bind(subscriptionId, account.id, plan.id, now, now, now),
			env.DB.prepare(
				"INSERT INTO subscription_plans (subscription_id, effective_period, rate_plan_id) VALUES (?, ?, ?)",
			).bind(subscriptionId, now.slice(0, 7), plan.id),
			env.DB.prepare(
				"INSERT INTO subscription_instances (environment, subscription_id, agent_key, added_at) VALUES ('live', ?, ?, ?)",
			).bind(subscriptionId, agentKey, now),
		]);
		// Routes cached elsewhere have expired.
		forgetRoutes("live", [agentKey]);
		const replay = await expectReplay(agentKey, "lost-1", original);
		expect(replay.subscription_id).toBeNull();
		const next = await first(agentKey, "lost-2");
		expect(next.subscription_id).toBe(subscriptionId);
		expect(await countOf(agentKey)).toBe(2);
	});

	it("holds when the new holder crashed after the old one released the instance, before storing its keys", async () => {
		const agentKey = uniqueKey();
		const original = await first(agentKey, "crash-1");
		const staleRoute = {
			accumulator: `live:inst:${agentKey}`,
			subscriptionId: null,
			accountId: null,
			startedAt: null,
			generation: 0,
			shards: 1,
		};
		const subscriptionId = await (async () => {
			// The new holder fails right after the handover, every time until the hook is removed.
			const account = await createAccount();
			const plan = await createPlan();
			const created = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.id,
				agent_instance_ids: [uniqueKey()],
			});
			return created.body.id as string;
		})();
		await runInDurableObject(subscriptionAccumulator(subscriptionId), (_, state) => {
			injectFaults(state, {
				handover: {
					afterRelease: () => {
						throw new Error("crash after release");
					},
				},
			});
		});
		await setInstances(subscriptionId, [agentKey]);
		// The old holder released the instance: a stale route to it is refused and re-routed, and the new holder
		// still fails before storing anything.
		rememberRoute("live", agentKey, staleRoute);
		const failed = await sendAction({ agent_key: agentKey, idempotency_key: "crash-1" });
		expect(failed.status).toBe(500);
		expect((await instanceAccumulator(agentKey).holdings()).find((h) => h.agentKey === agentKey)?.held).toBe(
			false,
		);
		// "Restarted": the handover runs again and the retry is a duplicate.
		await runInDurableObject(subscriptionAccumulator(subscriptionId), (_, state) => {
			injectFaults(state, {});
		});
		const replay = await expectReplay(agentKey, "crash-1", original);
		expect(replay.subscription_id).toBeNull();
		expect(await countOf(agentKey)).toBe(1);
	});

	it("upgrades dedupe keys stored before they were scoped to agent keys", async () => {
		const agentKey = uniqueKey();
		const now = new Date().toISOString();
		const original = {
			id: "act_legacy00000000000000000001",
			kind: "action",
			agentKey,
			type: "llm_call",
			value: null,
			metadata: { tokens: 7 },
			timestamp: now,
			receivedAt: now,
			idempotencyKey: "old-1",
			subscriptionId: null,
		};
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			const sql = state.storage.sql;
			sql.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)");
			sql.exec(
				"INSERT INTO meta (key, value) VALUES ('name', ?), ('account_id', NULL)",
				`live:inst:${agentKey}`,
			);
			sql.exec(
				"CREATE TABLE holdings (agent_key TEXT PRIMARY KEY, generation INTEGER NOT NULL, held INTEGER NOT NULL)",
			);
			sql.exec("INSERT INTO holdings (agent_key, generation, held) VALUES (?, 0, 1)", agentKey);
			sql.exec(
				"CREATE TABLE dedupe (key TEXT PRIMARY KEY, event TEXT NOT NULL, expires_at INTEGER NOT NULL)",
			);
			sql.exec(
				"INSERT INTO dedupe (key, event, expires_at) VALUES ('action:old-1', ?, ?)",
				JSON.stringify(original),
				Date.now() + 86_400_000,
			);
			// What a restarted accumulator does when it opens its storage.
			new AccumulatorStore(state.storage);
			expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'dedupe'").toArray()).toEqual([]);
			expect(sql.exec("SELECT agent_key, key FROM dedupe_keys").toArray()).toEqual([
				{ agent_key: agentKey, key: "action:old-1" },
			]);
			expect(sql.exec("SELECT generation, held, imported FROM holdings").toArray()).toEqual([
				{ generation: 0, held: 1, imported: -1 },
			]);
		});
		const replay = await sendAction({ agent_key: agentKey, idempotency_key: "old-1" });
		expect(replay.status).toBe(200);
		expect(replay.body).toMatchObject({ id: original.id, metadata: { tokens: 7 }, subscription_id: null });
	});

	it("hands over more keys than one page (1,001) when the instance moves", async () => {
		const agentKey = uniqueKey();
		const events = Array.from({ length: 1000 }, () => ({ agent_key: agentKey, action_type: "llm_call" }));
		const headers = { "Idempotency-Key": `many-${agentKey}` };
		const sentFirst = await post("/v1/actions/batch", { events }, { headers });
		expect(sentFirst.status).toBe(201);
		const extra = await first(agentKey, "one-more");
		await newSubscription([agentKey]);
		const retry = await post("/v1/actions/batch", { events }, { headers });
		expect(retry.status).toBe(200);
		expect(retry.body).toMatchObject({ processed: 0, duplicates: 1000 });
		expect(retry.body.results.map((r: { id: string }) => r.id)).toEqual(
			sentFirst.body.results.map((r: { id: string }) => r.id),
		);
		await expectReplay(agentKey, "one-more", extra);
		expect(await countOf(agentKey)).toBe(1001);
	});
});
