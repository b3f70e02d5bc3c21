import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import { archivedEvents } from "../events/fixtures";
import { post } from "../helpers";
import {
	instanceAccumulator,
	sendAction,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";
import { countDuringNextBatch, failedFlush } from "./flush-fixtures";

type Stub = ReturnType<typeof subscriptionAccumulator>;

/** Everything this accumulator put in D1 — and its raw events, in the R2 archive — in a stable order. */
async function d1Rows(accumulator: string) {
	const all = async (sql: string) => (await env.DB.prepare(sql).bind(accumulator).all()).results;
	return {
		events: await archivedEvents(accumulator),
		daily: await all(
			"SELECT agent_key, day, kind, type, field, count, sum, subscription_id FROM usage_daily WHERE accumulator = ? ORDER BY kind, type, field",
		),
		costs: await all(
			"SELECT agent_key, period, cost_type, currency, amount FROM usage_costs WHERE accumulator = ? ORDER BY cost_type",
		),
		outcomes: (
			await env.DB.prepare(
				"SELECT id, data FROM webhook_events WHERE event = 'outcome.completed' ORDER BY id",
			).all<{
				id: string;
				data: string;
			}>()
		).results.filter((row) => JSON.parse(row.data).subscription_id === accumulator.split(":")[2]),
	};
}

/** Holds the alarm back, shrinks the chunks and injects faults into the accumulator. */
async function configure(
	stub: Stub,
	change: (instance: UsageAccumulator, state: DurableObjectState) => void,
) {
	await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
		instance.settings.flushDelayMs = 60_000;
		change(instance, state);
	});
}

async function sendMix(agentKey: string) {
	const body = (events: unknown[]) => ({ events });
	// llm_call ×3: tokens 100 + 250.5 + 0.25 = 350.75, cost 0.1 + 0.2 (USD, type gpu) + 0.3 (EUR, llm_call);
	// search ×2; hire outcomes 1000 + 0.5 = 1000.5.
	await post(
		"/v1/actions/batch",
		body([
			{
				agent_key: agentKey,
				action_type: "llm_call",
				metadata: { tokens: 100, cost: 0.1, cost_type: "gpu" },
			},
			{
				agent_key: agentKey,
				action_type: "llm_call",
				metadata: { tokens: 250.5, cost: 0.2, cost_type: "gpu" },
			},
			{
				agent_key: agentKey,
				action_type: "llm_call",
				metadata: { tokens: 0.25, cost: 0.3, cost_currency: "EUR" },
			},
			{ agent_key: agentKey, action_type: "search" },
			{ agent_key: agentKey, action_type: "search", metadata: { flag: true } },
		]),
	);
	await sendOutcome({ agent_key: agentKey, value: 1000 });
	await sendOutcome({ agent_key: agentKey, value: 0.5 });
}

function expectedTotals(agentKey: string, subscriptionId: string) {
	const day = new Date().toISOString().slice(0, 10);
	const row = (kind: string, type: string, field: string, count: number, sum: string) => ({
		agent_key: agentKey,
		day,
		kind,
		type,
		field,
		count,
		sum,
		subscription_id: subscriptionId,
	});
	return {
		daily: [
			row("action", "llm_call", "", 3, "0"),
			row("action", "llm_call", "cost", 3, "0.6"),
			row("action", "llm_call", "tokens", 3, "350.75"),
			row("action", "search", "", 2, "0"),
			row("outcome", "hire", "", 2, "1000.5"),
		],
		costs: [
			{ agent_key: agentKey, period: day.slice(0, 7), cost_type: "gpu", currency: "USD", amount: "0.3" },
			{ agent_key: agentKey, period: day.slice(0, 7), cost_type: "llm_call", currency: "EUR", amount: "0.3" },
		],
	};
}

describe("usage accumulator flush", () => {
	it("copies events, daily aggregates, costs and outbox rows to D1 from its alarm; again, nothing changes", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		const name = `live:sub:${subscription.id}`;
		await configure(stub, () => {});
		await sendMix(agentKey);
		expect((await d1Rows(name)).events).toEqual([]);

		expect(await runDurableObjectAlarm(stub)).toBe(true);
		const flushed = await d1Rows(name);
		expect(flushed.events).toHaveLength(7);
		expect(flushed.daily).toEqual(expectedTotals(agentKey, subscription.id).daily);
		expect(flushed.costs).toEqual(expectedTotals(agentKey, subscription.id).costs);
		expect(flushed.outcomes).toHaveLength(2);

		expect(await runDurableObjectAlarm(stub)).toBe(false);
		expect(await stub.flush()).toMatchObject({ chunks: 0, complete: true });
		expect(await d1Rows(name)).toEqual(flushed);
	});

	it("writes aggregates in one D1 batch and raw events to the archive, not to D1", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		const name = `live:sub:${subscription.id}`;
		const batches: number[] = [];
		await configure(stub, (instance) => {
			const workerEnv = (instance as unknown as { env: typeof env }).env;
			const batch = workerEnv.DB.batch.bind(workerEnv.DB);
			(instance as unknown as { env: typeof env }).env = {
				...workerEnv,
				DB: Object.assign(Object.create(workerEnv.DB), {
					batch: (statements: D1PreparedStatement[]) => {
						batches.push(statements.length);
						return batch(statements);
					},
				}),
			};
		});
		await sendMix(agentKey);

		// 7 events archived; 5 daily rows, 2 cost rows and 2 outbox rows in one D1 batch of three statements.
		expect(await stub.flush()).toMatchObject({ events: 7, aggregates: 5, costs: 2, outbox: 2, chunks: 1 });
		// (A later batch is the webhook dispatch of the two outcome.completed rows.)
		expect(batches[0]).toBe(3);
		const flushed = await d1Rows(name);
		expect(flushed.events).toHaveLength(7);
		expect(flushed.daily).toEqual(expectedTotals(agentKey, subscription.id).daily);
		expect(flushed.outcomes).toHaveLength(2);
		const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM usage_events WHERE accumulator = ?")
			.bind(name)
			.first<{ n: number }>()) as { n: number };
		expect(n).toBe(0);
	});

	it("loses and doubles nothing when a flush fails half-way and is retried", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		const name = `live:sub:${subscription.id}`;
		await configure(stub, (instance, state) => {
			instance.settings.chunk = { events: 2, eventBytes: 1024 * 1024, rows: 2 };
			injectFaults(state, {
				flush: {
					beforeBatch: (chunk) => {
						if (chunk === 2) throw new Error("D1 unavailable");
					},
				},
			});
		});
		await sendMix(agentKey);

		expect(String(await failedFlush(stub))).toContain("D1 unavailable");
		const halfWay = await d1Rows(name);
		// The archive comes after D1 in a flush.
		expect(halfWay.events).toHaveLength(0);
		expect(halfWay.daily).toHaveLength(2);

		await runInDurableObject(stub, (_, state) => {
			injectFaults(state, {});
		});
		// 5 daily rows, 2 cost rows, 2 outbox rows in chunks of 2: three batches in all, one already done; then the
		// 7 events archived.
		expect(await stub.flush()).toMatchObject({
			events: 7,
			aggregates: 3,
			costs: 0,
			outbox: 0,
			chunks: 2,
			complete: true,
		});
		const done = await d1Rows(name);
		expect(done.events).toHaveLength(7);
		expect(done.daily).toEqual(expectedTotals(agentKey, subscription.id).daily);
		expect(done.costs).toEqual(expectedTotals(agentKey, subscription.id).costs);
		expect(done.outcomes).toHaveLength(2);
	});

	it("rewrites the same rows when D1 committed but the accumulator failed before marking them flushed", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		const name = `live:sub:${subscription.id}`;
		let failures = 1;
		await configure(stub, (_, state) => {
			injectFaults(state, {
				flush: {
					afterBatch: () => {
						if (failures-- > 0) throw new Error("evicted after the D1 write");
					},
				},
			});
		});
		await sendMix(agentKey);

		expect(String(await failedFlush(stub))).toContain("evicted");
		const committed = await d1Rows(name);
		expect(committed.events).toHaveLength(0);

		const retry = await stub.flush();
		expect(retry).toMatchObject({ events: 7, aggregates: 5, costs: 2, outbox: 2, chunks: 1 });
		expect(await d1Rows(name)).toEqual({ ...committed, events: expect.any(Array) });
		expect((await d1Rows(name)).events).toHaveLength(7);
		expect(committed.daily).toEqual(expectedTotals(agentKey, subscription.id).daily);
	});

	it("flushes again an aggregate that changed while its flush was in flight", async () => {
		const { subscription, account, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		const name = `live:sub:${subscription.id}`;
		await configure(stub, () => {});
		await countDuringNextBatch(stub, {
			name,
			accountId: account.id,
			agentKey,
			eventId: "act_late0000000000000000000000",
		});
		await sendAction({ agent_key: agentKey, action_type: "search" });

		await stub.flush();
		const searches = async () =>
			(await d1Rows(name)).daily.find((row) => row.type === "search" && row.field === "") as {
				count: number;
			};
		// The first flush wrote the chunk as read (1 search) and then the late event in a second chunk (2).
		expect((await searches()).count).toBe(2);
		expect((await d1Rows(name)).events).toHaveLength(2);
	});
});

describe("usage accumulator storage and alarm", () => {
	it("stores nothing when an accumulator that never counted anything is read or flushed", async () => {
		const stub = instanceAccumulator(uniqueKey("never-counted"));
		expect(await stub.usage("2026-01-01", "2026-12-31")).toEqual([]);
		expect(await stub.holdings()).toEqual([]);
		expect(await stub.flush()).toMatchObject({ chunks: 0, complete: true });
		await runInDurableObject(stub, (_, state) => {
			expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()).toEqual(
				[],
			);
		});
	});

	it("arms its alarm again for events recorded after an alarm flushed everything", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		await configure(stub, () => {});
		await sendAction({ agent_key: agentKey });
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		await runInDurableObject(stub, async (_, state) => {
			expect(await state.storage.getAlarm()).toBeNull();
		});

		await sendAction({ agent_key: agentKey });
		await runInDurableObject(stub, async (_, state) => {
			expect(await state.storage.getAlarm()).not.toBeNull();
		});
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		const name = `live:sub:${subscription.id}`;
		expect((await d1Rows(name)).events).toHaveLength(2);
	});
});
