/**
 * §19 attribution: a subscription's started_at, events billable by their timestamp, and unbilled usage listed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, post } from "../helpers";
import {
	createPlan,
	instanceAccumulator,
	sendAction,
	sendOutcome,
	uniqueKey,
} from "../subscriptions/fixtures";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function create(fields: Record<string, unknown>) {
	const account = await createAccount();
	const plan = await createPlan();
	return await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [uniqueKey()],
		...fields,
	});
}

describe("POST /v1/subscriptions started_at", () => {
	it("starts when asked, up to 35 days back; default now", async () => {
		const startedAt = ago(3 * DAY);
		const response = await create({ started_at: startedAt.replace("Z", "+00:00") });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.started_at).toBe(startedAt);
		expect(response.body.created_at > startedAt).toBe(true);
		expect((await get(`/v1/subscriptions/${response.body.id}`)).body.started_at).toBe(startedAt);
		const plans = await env.DB.prepare(
			"SELECT effective_period FROM subscription_plans WHERE subscription_id = ?",
		)
			.bind(response.body.id)
			.all();
		expect(plans.results).toEqual([{ effective_period: startedAt.slice(0, 7) }]);

		const now = await create({});
		expect(now.body.started_at).toBe(now.body.created_at);
	});

	it("refuses a start in the future, more than 35 days back, or not a date-time, and creates nothing", async () => {
		const before = (await env.DB.prepare("SELECT count(*) AS n FROM subscriptions").first<{ n: number }>())
			?.n;
		for (const startedAt of [ago(-HOUR), ago(36 * DAY), "2026-11-06", "yesterday", 5]) {
			const error = expectError(await create({ started_at: startedAt }), 400, "validation_error");
			expect(error.details?.[0]?.path).toBe("started_at");
		}
		const after = (await env.DB.prepare("SELECT count(*) AS n FROM subscriptions").first<{ n: number }>())?.n;
		expect(after).toBe(before);
	});
});

describe("billable events", () => {
	it("are those that reached a subscription at a timestamp when it was active", async () => {
		const agentKey = uniqueKey();
		const outside = await sendAction({ agent_key: agentKey });
		const account = await createAccount();
		const plan = await createPlan();
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [agentKey],
			started_at: ago(HOUR),
		});
		expect(created.status).toBe(201);
		const beforeStart = await sendAction({ agent_key: agentKey, timestamp: ago(2 * HOUR) });
		const afterStart = await sendAction({ agent_key: agentKey, timestamp: ago(HOUR / 2) });
		expect(beforeStart.body.subscription_id).toBe(created.body.id);

		const events = (await get(`/v1/events?agent_key=${agentKey}`)).body.events as {
			id: string;
			billable: boolean;
		}[];
		const billable = Object.fromEntries(events.map((e) => [e.id, e.billable]));
		expect(billable).toEqual({
			[outside.body.id]: false,
			[beforeStart.body.id]: false,
			[afterStart.body.id]: true,
		});
	});
});

describe("GET /v1/usage/unbilled", () => {
	it("lists usage of instances outside every subscription, an unknown key included, per period", async () => {
		const unknown = uniqueKey("unknown");
		await sendAction({ agent_key: unknown, action_type: "search" });
		await sendAction({ agent_key: unknown, action_type: "search" });
		await sendOutcome({ agent_key: unknown, outcome_type: "hire", value: 2.25 });
		await sendOutcome({ agent_key: unknown, outcome_type: "hire", value: 0.5 });
		const lastMonth = new Date(Date.now() - 40 * DAY);
		// An instance in a subscription is billed, not listed.
		const subscribed = uniqueKey();
		const account = await createAccount();
		const plan = await createPlan();
		await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [subscribed],
		});
		await sendAction({ agent_key: subscribed });
		await instanceAccumulator(unknown).flush();

		const period = new Date().toISOString().slice(0, 7);
		const response = await get(`/v1/usage/unbilled?billing_period=${period}`);
		expect(response.status).toBe(200);
		expect(response.body.billing_period).toBe(period);
		const mine = response.body.usage.filter((line: { agent_key: string }) => line.agent_key === unknown);
		expect(mine).toEqual([
			{ agent_key: unknown, kind: "action", type: "search", count: 2, value: null },
			{ agent_key: unknown, kind: "outcome", type: "hire", count: 2, value: 2.75 },
		]);
		expect(response.body.usage.some((line: { agent_key: string }) => line.agent_key === subscribed)).toBe(
			false,
		);
		// Default: the current period. Another period: not there.
		expect((await get("/v1/usage/unbilled")).body.usage).toEqual(response.body.usage);
		const other = await get(`/v1/usage/unbilled?billing_period=${lastMonth.toISOString().slice(0, 7)}`);
		expect(other.body.usage.some((line: { agent_key: string }) => line.agent_key === unknown)).toBe(false);
	});

	it("keeps environments apart and answers its errors", async () => {
		const period = new Date().toISOString().slice(0, 7);
		const unknown = uniqueKey("unknown");
		await sendAction({ agent_key: unknown }, { key: await createKey("sdk", "test") });
		await instanceAccumulator(unknown, "test").flush();
		const live = await get(`/v1/usage/unbilled?billing_period=${period}`);
		expect(live.body.usage.some((line: { agent_key: string }) => line.agent_key === unknown)).toBe(false);
		const test = await get(`/v1/usage/unbilled?billing_period=${period}`, {
			key: await createKey("read-only", "test"),
		});
		expect(test.body.usage.filter((line: { agent_key: string }) => line.agent_key === unknown)).toHaveLength(
			1,
		);

		for (const query of ["billing_period=2026-13", "billing_period=2026-1", "billing_period=x", "other=1"]) {
			expectError(await get(`/v1/usage/unbilled?${query}`), 400, "validation_error");
		}
		expectError(await get("/v1/usage/unbilled", { key: await createKey("sdk") }), 403, "forbidden");
	});
});
