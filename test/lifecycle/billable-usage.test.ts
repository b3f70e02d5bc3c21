/**
 * §19: only billable usage is billed — events that reached a subscription at a timestamp when it was active — and
 * `adopt_unbilled_usage` moves an instance's unbilled usage since `started_at` into a new subscription, once.
 */
import { createExecutionContext, createScheduledController, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { adoptUnbilledUsage } from "../../src/subscriptions/adoption";
import { createAccount, expectError, get, post } from "../helpers";
import { generateOne, linesOf } from "../invoicing/fixtures";
import {
	createPlan,
	instanceAccumulator,
	sendAction,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

const worker: ExportedHandler<Env> = entry;
const MINUTE = 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** The billing period of an instant (the tests' instants are at most an hour back). */
const periodOf = (instant: string) => instant.slice(0, 7);

type UsageLine = { kind: string; type: string; count: number; value: number | null };

const callsOf = (usage: UsageLine[]) =>
	usage.filter((line) => line.kind === "action" && line.type === "llm_call").reduce((n, l) => n + l.count, 0);

async function unbilledCalls(agentKey: string, period: string): Promise<number> {
	const response = await get(`/v1/usage/unbilled?billing_period=${period}`);
	expect(response.status).toBe(200);
	return callsOf(
		(response.body.usage as (UsageLine & { agent_key: string })[]).filter((l) => l.agent_key === agentKey),
	);
}

async function sendCalls(agentKey: string, count: number, timestamp: string, tokens: number) {
	for (let i = 0; i < count; i++) {
		const response = await sendAction({ agent_key: agentKey, timestamp, metadata: { tokens } });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
	}
}

async function adoptionPending(subscriptionId: string) {
	const row = await env.DB.prepare("SELECT adopt_pending FROM subscriptions WHERE id = ?")
		.bind(subscriptionId)
		.first<{ adopt_pending: number }>();
	return row?.adopt_pending;
}

async function newSubscription(agentKey: string, fields: Record<string, unknown>) {
	const account = await createAccount();
	const plan = await createPlan();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [agentKey],
		...fields,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { account, subscription: response.body as { id: string; started_at: string } };
}

afterEach(() => {
	vi.restoreAllMocks();
});

/** The failure a test injected into an adoption is logged, as expected: captured here, and checked. */
function expectAdoptionFailureLogged() {
	const error = vi.spyOn(console, "error").mockImplementation(() => {});
	return {
		check(subscriptionId: string) {
			expect(error).toHaveBeenCalledWith(
				JSON.stringify({
					at: "createSubscription.adopt",
					subscription: subscriptionId,
					error: "Error: evicted after setting the events aside",
				}),
			);
			error.mockRestore();
		},
	};
}

describe("billable usage", () => {
	it("is what reached the subscription from its start: earlier events are recorded, listed unbilled, never billed", async () => {
		const agentKey = uniqueKey();
		const startedAt = ago(30 * MINUTE);
		const { account, subscription } = await newSubscription(agentKey, { started_at: startedAt });
		// 5 calls of 100 tokens timestamped before the start reach the subscription's accumulator; 4 of 10 after it.
		await sendCalls(agentKey, 5, ago(45 * MINUTE), 100);
		await sendCalls(agentKey, 4, ago(10 * MINUTE), 10);
		const period = periodOf(ago(10 * MINUTE));
		await subscriptionAccumulator(subscription.id).flush();

		const usage = await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=${period}`);
		expect(usage.status).toBe(200);
		expect(callsOf(usage.body.usage)).toBe(4);
		// Base fee 10 + tokens 40 × 0.001 + calls (4 − 2 included) × 0.01.
		expect(usage.body.total).toBe(10.06);

		// What the instance did is all there; what was not billable is listed as unbilled.
		expect(callsOf((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage)).toBe(9);
		expect(await unbilledCalls(agentKey, periodOf(ago(45 * MINUTE)))).toBe(5);

		const invoice = await generateOne(period, account.id);
		expect(linesOf(invoice).filter(([metric]) => metric !== "base_fee")).toEqual([
			["tokens", 40, 0.04],
			["calls", 4, 0.02],
			["hires", 0, 0],
		]);
		expect(invoice.amount).toBe(10.06);
	});
});

describe("POST /v1/subscriptions adopt_unbilled_usage", () => {
	async function instanceWithHistory() {
		const agentKey = uniqueKey();
		// Outside every subscription: 3 calls before the start to come, 4 after it.
		await sendCalls(agentKey, 3, ago(50 * MINUTE), 100);
		await sendCalls(agentKey, 4, ago(20 * MINUTE), 100);
		await instanceAccumulator(agentKey).flush();
		return agentKey;
	}

	it("moves the instance's unbilled usage since started_at into the subscription, billed with its period", async () => {
		const agentKey = await instanceWithHistory();
		const period = periodOf(ago(20 * MINUTE));
		expect(await unbilledCalls(agentKey, period)).toBe(7);

		const { account, subscription } = await newSubscription(agentKey, {
			started_at: ago(30 * MINUTE),
			adopt_unbilled_usage: true,
		});
		await sendCalls(agentKey, 2, ago(MINUTE), 100);
		await Promise.all([
			subscriptionAccumulator(subscription.id).flush(),
			instanceAccumulator(agentKey).flush(),
		]);

		const usage = await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=${period}`);
		expect(callsOf(usage.body.usage)).toBe(6);
		// Base fee 10 + tokens 600 × 0.001 + calls (6 − 2) × 0.01.
		expect(usage.body.total).toBe(10.64);
		expect(await unbilledCalls(agentKey, periodOf(ago(50 * MINUTE)))).toBe(3);
		// Moved, not copied: the instance's usage is still 9 calls.
		expect(callsOf((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage)).toBe(9);

		// The explorer lists each event once; the adopted ones now belong to the subscription, billable.
		const events = (await get(`/v1/events?agent_key=${agentKey}&limit=100`)).body.events as {
			id: string;
			timestamp: string;
			subscription_id: string | null;
			billable: boolean;
		}[];
		expect(events).toHaveLength(9);
		expect(new Set(events.map((e) => e.id)).size).toBe(9);
		for (const event of events) {
			const adopted = event.timestamp >= subscription.started_at;
			expect(event.billable).toBe(adopted);
			expect(event.subscription_id).toBe(adopted ? subscription.id : null);
		}

		const invoice = await generateOne(period, account.id);
		expect(linesOf(invoice).filter(([metric]) => metric !== "base_fee")).toEqual([
			["tokens", 600, 0.6],
			["calls", 6, 0.04],
			["hires", 0, 0],
		]);
	});

	it("counts adopted usage once, however many adoptions run at once or are retried after a failure", async () => {
		const agentKey = await instanceWithHistory();
		const period = periodOf(ago(20 * MINUTE));
		// The adoption made while creating fails after the instance's accumulator set its events aside for the
		// subscription, before the subscription counted them: the subscription is created, its adoption pending.
		let failures = 1;
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			injectFaults(state, {
				adoption: {
					afterSetAside: () => {
						if (failures-- > 0) throw new Error("evicted after setting the events aside");
					},
				},
			});
		});
		const logged = expectAdoptionFailureLogged();
		const { subscription } = await newSubscription(agentKey, {
			started_at: ago(30 * MINUTE),
			adopt_unbilled_usage: true,
		});
		logged.check(subscription.id);
		const stub = subscriptionAccumulator(subscription.id);
		const usageNow = async () =>
			callsOf(
				(await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=${period}`)).body.usage,
			);
		expect(await usageNow()).toBe(0);
		expect(await adoptionPending(subscription.id)).toBe(1);

		// Retried many at once (the 5-minute cron, a second run of it), then again once done.
		const scope = { environment: "live" as const };
		await Promise.all([
			...Array.from({ length: 4 }, () => adoptUnbilledUsage(env, scope, subscription.id)),
			worker.scheduled?.(createScheduledController({ cron: "*/5 * * * *" }), env, createExecutionContext()),
		]);
		await adoptUnbilledUsage(env, scope, subscription.id);
		expect(await usageNow()).toBe(4);
		expect(await adoptionPending(subscription.id)).toBe(0);
		await Promise.all([stub.flush(), instanceAccumulator(agentKey).flush()]);
		expect(callsOf((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage)).toBe(7);
		expect(await unbilledCalls(agentKey, periodOf(ago(50 * MINUTE)))).toBe(3);
	});

	it("is finished by invoicing when it is still pending, so the adopted usage is on the period's invoice", async () => {
		const agentKey = await instanceWithHistory();
		let failures = 1;
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			injectFaults(state, {
				adoption: {
					afterSetAside: () => {
						if (failures-- > 0) throw new Error("evicted after setting the events aside");
					},
				},
			});
		});
		const logged = expectAdoptionFailureLogged();
		const { account, subscription } = await newSubscription(agentKey, {
			started_at: ago(30 * MINUTE),
			adopt_unbilled_usage: true,
		});
		logged.check(subscription.id);
		expect(await adoptionPending(subscription.id)).toBe(1);
		const invoice = await generateOne(periodOf(ago(20 * MINUTE)), account.id);
		expect(linesOf(invoice).filter(([metric]) => metric === "calls")).toEqual([["calls", 4, 0.02]]);
		expect(await adoptionPending(subscription.id)).toBe(0);
	});

	it("moves the usage into the shard that counts the instance in a sharded subscription", async () => {
		const agentKey = await instanceWithHistory();
		const { account, subscription } = await newSubscription(agentKey, {
			started_at: ago(30 * MINUTE),
			adopt_unbilled_usage: true,
			shards: 4,
		});
		const period = periodOf(ago(20 * MINUTE));
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=${period}`);
		expect(callsOf(usage.body.usage)).toBe(4);
		const invoice = await generateOne(period, account.id);
		expect(linesOf(invoice).filter(([metric]) => metric === "calls")).toEqual([["calls", 4, 0.02]]);
		await instanceAccumulator(agentKey).flush();
		expect(await unbilledCalls(agentKey, periodOf(ago(50 * MINUTE)))).toBe(3);
	});

	it("leaves no trace of an instance in the unbilled list once all its usage was adopted", async () => {
		const agentKey = await instanceWithHistory();
		await newSubscription(agentKey, { started_at: ago(55 * MINUTE), adopt_unbilled_usage: true });
		await instanceAccumulator(agentKey).flush();
		for (const period of new Set([periodOf(ago(50 * MINUTE)), periodOf(ago(20 * MINUTE))])) {
			const listed = (await get(`/v1/usage/unbilled?billing_period=${period}`)).body.usage as {
				agent_key: string;
			}[];
			expect(listed.filter((line) => line.agent_key === agentKey)).toEqual([]);
		}
		expect((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 7, value: null },
		]);
	});

	it("adopts nothing without the flag, and refuses a flag that is not a boolean", async () => {
		const agentKey = await instanceWithHistory();
		const { subscription } = await newSubscription(agentKey, { started_at: ago(30 * MINUTE) });
		expect(callsOf((await get(`/v1/usage?subscription_id=${subscription.id}`)).body.usage)).toBe(0);
		expect(await unbilledCalls(agentKey, periodOf(ago(20 * MINUTE)))).toBe(7);

		const account = await createAccount();
		const plan = await createPlan();
		const before = await env.DB.prepare("SELECT count(*) AS n FROM subscriptions").first<{ n: number }>();
		const refused = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
			adopt_unbilled_usage: "yes",
		});
		expect(expectError(refused, 400, "validation_error").details?.[0]?.path).toBe("adopt_unbilled_usage");
		const after = await env.DB.prepare("SELECT count(*) AS n FROM subscriptions").first<{ n: number }>();
		expect(after?.n).toBe(before?.n);
	});
});
