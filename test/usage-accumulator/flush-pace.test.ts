/**
 * The pace of an accumulator's alarm (docs/scaling.md#flush-pace): flushDelayMs after the first unflushed event,
 * but no sooner than busyFlushEveryMs after the alarm's last flush, except in shards other than the head; and an
 * alarm leaves what was written during its flush to the next alarm instead of reading again.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
	accumulatorName,
	accumulatorStub,
	shardOf,
} from "../../src/durable-objects/usage-accumulator/handle";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { createAccount, post } from "../helpers";
import {
	createPlan,
	sendAction,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";
import { countDuringNextBatch } from "./flush-fixtures";

type Stub = ReturnType<typeof subscriptionAccumulator>;

// Long enough that no alarm fires by itself during a test: the tests run them.
const DELAY_MS = 20_000;
const BUSY_EVERY_MS = 60_000;

async function pace(stub: Stub) {
	await runInDurableObject(stub, (instance: UsageAccumulator) => {
		instance.settings.flushDelayMs = DELAY_MS;
		instance.settings.busyFlushEveryMs = BUSY_EVERY_MS;
	});
}

/** Milliseconds from now to the armed alarm; null when none is armed. */
async function alarmIn(stub: Stub): Promise<number | null> {
	return runInDurableObject(stub, async (_, state) => {
		const at = await state.storage.getAlarm();
		return at === null ? null : at - Date.now();
	});
}

async function searchCount(subscriptionId: string): Promise<number> {
	const row = await env.DB.prepare(
		"SELECT count FROM usage_daily WHERE subscription_id = ? AND type = 'search' AND field = ''",
	)
		.bind(subscriptionId)
		.first<{ count: number }>();
	return row?.count ?? 0;
}

describe("flush pace", () => {
	it("flushes a quiet accumulator flushDelayMs after its event, a busy one at most every busyFlushEveryMs", async () => {
		const { subscription, keys } = await subscribe();
		const stub = subscriptionAccumulator(subscription.id);
		await pace(stub);

		await sendAction({ agent_key: keys[0] as string, action_type: "llm_call" });
		const first = (await alarmIn(stub)) as number;
		expect(first).toBeGreaterThan(DELAY_MS - 5_000);
		expect(first).toBeLessThanOrEqual(DELAY_MS);

		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await alarmIn(stub)).toBeNull();
		// Just after a flush: the next one waits for busyFlushEveryMs from it, not flushDelayMs from the event.
		await sendAction({ agent_key: keys[0] as string });
		const next = (await alarmIn(stub)) as number;
		expect(next).toBeGreaterThan(BUSY_EVERY_MS - 5_000);
		expect(next).toBeLessThanOrEqual(BUSY_EVERY_MS);

		// Nothing is lost by the wait: the alarm flushes both events.
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await searchCount(subscription.id)).toBe(0);
		const actions = await env.DB.prepare(
			"SELECT count FROM usage_daily WHERE subscription_id = ? AND kind = 'action' AND field = ''",
		)
			.bind(subscription.id)
			.first<{ count: number }>();
		expect(actions?.count).toBe(2);
	});

	it("keeps flushDelayMs in a shard other than the head, whose flushes report to the head", async () => {
		const shards = 2;
		let key = uniqueKey("shard");
		while (shardOf(key, shards) !== 1) key = uniqueKey("shard");
		const account = await createAccount();
		const plan = await createPlan({});
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [key],
			shards,
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		const subscriptionId = (response.body as { id: string }).id;
		const stub = accumulatorStub(env, accumulatorName("live", { subscriptionId, shard: 1 }));
		await pace(stub);

		await sendAction({ agent_key: key });
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		await sendAction({ agent_key: key });
		const next = (await alarmIn(stub)) as number;
		expect(next).toBeGreaterThan(DELAY_MS - 5_000);
		expect(next).toBeLessThanOrEqual(DELAY_MS);
	});

	it("leaves what is written during an alarm's flush to the next alarm, which it arms", async () => {
		const { subscription, account, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const name = `live:sub:${subscription.id}`;
		const stub = subscriptionAccumulator(subscription.id);
		await pace(stub);
		await countDuringNextBatch(stub, {
			name,
			accountId: account.id,
			agentKey,
			eventId: "act_latealarm00000000000000000",
		});
		await sendAction({ agent_key: agentKey, action_type: "search" });

		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await searchCount(subscription.id)).toBe(1);
		expect(await alarmIn(stub)).not.toBeNull();

		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await searchCount(subscription.id)).toBe(2);
		expect(await alarmIn(stub)).toBeNull();
	});
});
