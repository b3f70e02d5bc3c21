import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { createKey, expectError, get, patch, post } from "../helpers";
import {
	createPlan,
	sendAction,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();
const dayOf = (iso: string) => iso.slice(0, 10);

describe("GET /v1/usage by agent_key", () => {
	it("answers exactly what was sent, per kind and type", async () => {
		const agentKey = uniqueKey();
		await sendAction({ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 10 } });
		await sendAction({ agent_key: agentKey, action_type: "llm_call" });
		await sendAction({ agent_key: agentKey, action_type: "search" });
		// 0.1 + 0.2 is 0.3 exactly, not 0.30000000000000004.
		await sendOutcome({ agent_key: agentKey, outcome_type: "lead", value: 0.1 });
		await sendOutcome({ agent_key: agentKey, outcome_type: "lead", value: 0.2 });
		const response = await get(`/v1/usage?agent_key=${agentKey}`);
		expect(response.status).toBe(200);
		const month = new Date().toISOString().slice(0, 7);
		expect(response.body).toEqual({
			start_date: `${month}-01`,
			end_date: expect.stringMatching(new RegExp(`^${month}-(28|29|30|31)$`)),
			usage: [
				{ kind: "action", type: "llm_call", count: 2, value: null },
				{ kind: "action", type: "search", count: 1, value: null },
				{ kind: "outcome", type: "lead", count: 2, value: 0.3 },
			],
		});
	});

	it("answers in real time, before anything reached D1", async () => {
		const { subscription, keys } = await subscribe();
		await runInDurableObject(subscriptionAccumulator(subscription.id), (instance: UsageAccumulator) => {
			instance.settings.flushDelayMs = 60_000;
		});
		await sendAction({ agent_key: keys[0] });
		const inD1 = await env.DB.prepare("SELECT count(*) AS n FROM usage_daily WHERE subscription_id = ?")
			.bind(subscription.id)
			.first();
		expect(inD1?.n).toBe(0);
		expect((await get(`/v1/usage?agent_key=${keys[0]}`)).body.usage[0].count).toBe(1);
	});

	it("filters by UTC day, both bare-date ends inclusive; a date-time end covers its day", async () => {
		const agentKey = uniqueKey();
		const [old, mid, recent] = [daysAgo(20), daysAgo(10), daysAgo(2)];
		for (const timestamp of [old, mid, mid, recent]) await sendAction({ agent_key: agentKey, timestamp });
		const count = async (query: string) => {
			const response = await get(`/v1/usage?agent_key=${agentKey}&${query}`);
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			return response.body.usage[0]?.count ?? 0;
		};
		expect(await count(`start_date=${dayOf(old)}&end_date=${dayOf(recent)}`)).toBe(4);
		expect(await count(`start_date=${dayOf(mid)}&end_date=${dayOf(mid)}`)).toBe(2);
		expect(await count(`start_date=${dayOf(old)}&end_date=${dayOf(mid)}T00:00:00Z`)).toBe(3);
		expect(await count(`start_date=${dayOf(daysAgo(1))}`)).toBe(0);
		const echoed = await get(
			`/v1/usage?agent_key=${agentKey}&start_date=${dayOf(old)}&end_date=${dayOf(mid)}`,
		);
		expect(echoed.body).toMatchObject({ start_date: dayOf(old), end_date: dayOf(mid) });
	});

	it("adds up the instance's usage in every accumulator it was counted in", async () => {
		const agentKey = uniqueKey();
		await sendAction({ agent_key: agentKey });
		const { subscription } = await subscribe([agentKey]);
		await sendAction({ agent_key: agentKey });
		await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: [uniqueKey()] });
		await sendAction({ agent_key: agentKey });
		expect((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 3, value: null },
		]);
	});
});

describe("GET /v1/usage by subscription_id", () => {
	it("prices the current period so far with the subscription's plan", async () => {
		const { subscription, plan, keys } = await subscribe([uniqueKey(), uniqueKey()]);
		const [first, second] = keys as [string, string];
		await post("/v1/actions/batch", {
			events: [
				{ agent_key: first, action_type: "llm_call", metadata: { tokens: 100 } },
				{ agent_key: first, action_type: "llm_call", metadata: { tokens: 250 } },
				{ agent_key: second, action_type: "llm_call", metadata: { tokens: 650 } },
			],
		});
		await sendOutcome({ agent_key: second, outcome_type: "hire", value: 1250.5 });
		// A month-old event is usage, but not of the current period: it is not priced.
		await sendAction({ agent_key: first, timestamp: daysAgo(34), metadata: { tokens: 1_000_000 } });

		const response = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(response.status).toBe(200);
		// tokens 100 + 250 + 650 = 1,000 × $0.001 = $1.00; calls 3 − 2 included = 1 × $0.01;
		// hires 10% of 1,250.50 = $125.05; base fee $10. Total 10 + 1 + 0.01 + 125.05 = $136.06.
		expect(response.body).toMatchObject({
			subscription_id: subscription.id,
			rate_plan_id: plan.id,
			billing_period: new Date().toISOString().slice(0, 7),
			currency: "USD",
			usage: [
				{ kind: "action", type: "llm_call", count: 3, value: null },
				{ kind: "outcome", type: "hire", count: 1, value: 1250.5 },
			],
			charges: [
				{ metric: "base_fee", model: "flat", quantity: 1, billable_quantity: 1, amount: 10 },
				{ metric: "tokens", model: "per_unit", quantity: 1000, billable_quantity: 1000, amount: 1 },
				{ metric: "calls", model: "per_unit", quantity: 3, billable_quantity: 1, amount: 0.01 },
				{ metric: "hires", model: "percentage", quantity: 1250.5, billable_quantity: 1250.5, amount: 125.05 },
			],
			total: 136.06,
		});

		// Asking from the old event's day answers that event's billing period, never its line next to this
		// month's charges (CONTRACT §6); the subscription was not active then, so nothing is charged, and the
		// event, from before its start, is not its usage (§19) but the instance's.
		const withOld = await get(
			`/v1/usage?subscription_id=${subscription.id}&start_date=${dayOf(daysAgo(34))}`,
		);
		expect(withOld.body).toMatchObject({
			billing_period: daysAgo(34).slice(0, 7),
			usage: [],
			charges: [],
			total: 0,
		});
		const instance = await get(`/v1/usage?agent_key=${first}&start_date=${dayOf(daysAgo(34))}`);
		expect(instance.body.usage).toEqual([{ kind: "action", type: "llm_call", count: 1, value: null }]);
		const oneInstance = await get(`/v1/usage?subscription_id=${subscription.id}&agent_key=${second}`);
		expect(oneInstance.body.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 1, value: null },
			{ kind: "outcome", type: "hire", count: 1, value: 1250.5 },
		]);
	});

	it("prices with the current plan while a plan change is pending", async () => {
		const { subscription, plan } = await subscribe();
		const next = await createPlan({ base_fee: 99 });
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.id });
		const response = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(response.body).toMatchObject({ rate_plan_id: plan.id, total: 10 });
	});

	it("answers 404 for an unknown subscription or one of the other environment", async () => {
		expectError(await get("/v1/usage?subscription_id=sub_missing"), 404, "not_found");
		const { subscription } = await subscribe();
		const testSdk = await createKey("sdk", "test");
		expectError(
			await get(`/v1/usage?subscription_id=${subscription.id}`, { key: testSdk }),
			404,
			"not_found",
		);
	});

	it("may be read with SDK and read-only keys", async () => {
		const { subscription } = await subscribe();
		for (const kind of ["sdk", "read-only"] as const) {
			const response = await get(`/v1/usage?subscription_id=${subscription.id}`, {
				key: await createKey(kind),
			});
			expect(response.status).toBe(200);
		}
	});
});

describe("GET /v1/usage errors", () => {
	it.each([
		["neither agent_key nor subscription_id", "start_date=2026-01-01", "agent_key"],
		["a start after the end", "agent_key=k&start_date=2026-02-02&end_date=2026-02-01", "start_date"],
		["a date that does not exist", "agent_key=k&start_date=2026-02-30", "start_date"],
		["a date-time without an offset", "agent_key=k&end_date=2026-02-01T10:00:00", "end_date"],
		["an unknown parameter", "agent_key=k&group_by=day", "group_by"],
		["an invalid agent_key", "agent_key=a%20b", "agent_key"],
	])("answers 400 for %s", async (_, query, path) => {
		const error = expectError(await get(`/v1/usage?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
	});
});
