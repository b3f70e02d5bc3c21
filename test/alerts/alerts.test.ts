import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { createKey, del, expectError, get, post } from "../helpers";
import { currentPeriod, customer, instanceKey, sdkKey, shiftPeriod } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";
import { sendCalls, triggeredEvents } from "./fixtures";

// Alerts and budgets (§18): evaluated by the accumulator on ingest, one alert.triggered per period.
// calls: $0.01 each; base fee $10.
const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

async function createAlert(body: Record<string, unknown>) {
	const response = await post("/v1/alerts", body);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; status: string };
}

describe("POST /v1/alerts", () => {
	it("creates an armed alert", async () => {
		const { subscription, account } = await customer(plan);
		const response = await post("/v1/alerts", {
			subscription_id: subscription.id,
			metric: "calls",
			threshold: 800,
			name: "80% of budget",
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^alr_[0-9a-z]{26}$/),
			subscription_id: subscription.id,
			account_id: account.id,
			type: "usage",
			metric: "calls",
			threshold: 800,
			name: "80% of budget",
			block: false,
			status: "armed",
			triggered_at: null,
			billing_period: currentPeriod(),
			created_at: expect.stringMatching(/Z$/),
		});
		const total = await createAlert({ subscription_id: subscription.id, threshold: 1000, block: true });
		expect(total).toMatchObject({ metric: null, name: null, block: true });
	});

	it("refuses an unknown subscription (404), a metric the plan lacks, bad thresholds and unknown fields (400)", async () => {
		const { subscription } = await customer(plan);
		expectError(await post("/v1/alerts", { subscription_id: "sub_nope", threshold: 1 }), 404, "not_found");
		const wrongMetric = await post("/v1/alerts", {
			subscription_id: subscription.id,
			metric: "tokens",
			threshold: 1,
		});
		expectError(wrongMetric, 400, "validation_error");
		expect(wrongMetric.body.error.details[0].path).toBe("metric");
		expect(wrongMetric.body.error.message).toContain("calls");
		for (const threshold of [0, -5, "10", 1e16, 0.0000000000001, null]) {
			const bad = await post("/v1/alerts", { subscription_id: subscription.id, threshold });
			expectError(bad, 400, "validation_error");
			expect(bad.body.error.details[0].path).toBe("threshold");
		}
		expectError(
			await post("/v1/alerts", { subscription_id: subscription.id, threshold: 1, status: "triggered" }),
			400,
			"validation_error",
		);
		const stored = await env.DB.prepare("SELECT count(*) AS n FROM alerts WHERE subscription_id = ?1")
			.bind(subscription.id)
			.first<{ n: number }>();
		expect(stored?.n).toBe(0);
	});

	it("needs a read-write key; SDK keys may not manage alerts", async () => {
		const { subscription } = await customer(plan);
		const readOnly = await createKey("read-only");
		expectError(
			await post("/v1/alerts", { subscription_id: subscription.id, threshold: 1 }, { key: readOnly }),
			403,
			"forbidden",
		);
		expectError(await get("/v1/alerts", { key: await sdkKey() }), 403, "forbidden");
	});
});

describe("GET and DELETE /v1/alerts", () => {
	it("reads, lists by subscription and deletes", async () => {
		const { subscription } = await customer(plan);
		const other = await customer(plan);
		const first = await createAlert({ subscription_id: subscription.id, threshold: 5 });
		const second = await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 7 });
		await createAlert({ subscription_id: other.subscription.id, threshold: 9 });

		expect((await get(`/v1/alerts/${first.id}`)).body).toEqual(first);
		const list = await get(`/v1/alerts?subscription_id=${subscription.id}`);
		expect(list.status).toBe(200);
		expect(list.body).toMatchObject({ total: 2, limit: 20, offset: 0 });
		expect(list.body.alerts.map((a: { id: string }) => a.id)).toEqual([second.id, first.id]);
		expectError(await get("/v1/alerts?limit=0"), 400, "validation_error");

		const deleted = await del(`/v1/alerts/${first.id}`);
		expect(deleted.status).toBe(204);
		expectError(await get(`/v1/alerts/${first.id}`), 404, "not_found");
		expectError(await del(`/v1/alerts/${first.id}`), 404, "not_found");
		expect((await get(`/v1/alerts?subscription_id=${subscription.id}`)).body.total).toBe(1);
	});
});

describe("alert evaluation on ingest", () => {
	it("an alert crossing inside a 1,000-event batch gives exactly one webhook, then stays triggered", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		const onCalls = await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 500 });
		// Total: 10 + 1,000 × 0.01 = 20 ≥ 15.
		const onAmount = await createAlert({ subscription_id: subscription.id, threshold: 15 });
		const notYet = await createAlert({ subscription_id: subscription.id, threshold: 25 });
		await sendCalls(agentKey, 1000);
		await sendCalls(agentKey, 1000);
		await subscriptionAccumulator(subscription.id).flush();

		const events = await triggeredEvents(onCalls.id);
		expect(events).toHaveLength(1);
		expect(events[0]).toEqual({
			alert_id: onCalls.id,
			account_id: subscription.account_id,
			subscription_id: subscription.id,
			type: "usage",
			metric: "calls",
			threshold: 500,
			value: 1000,
			billing_period: currentPeriod(),
			block: false,
		});
		expect(await triggeredEvents(onAmount.id)).toMatchObject([{ metric: null, threshold: 15, value: 20 }]);
		// The second batch took the total to 30 ≥ 25.
		expect(await triggeredEvents(notYet.id)).toMatchObject([{ value: 30 }]);
		const read = await get(`/v1/alerts/${onCalls.id}`);
		expect(read.body).toMatchObject({ status: "triggered", triggered_at: expect.stringMatching(/Z$/) });
	});

	it("watches a filtered metric: only matching events bring it to its threshold", async () => {
		const filtered = {
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
					unit_price: 0.00001,
				},
			],
		};
		const { subscription, instances } = await customer(filtered);
		const [agentKey] = instances as [string];
		const alert = await createAlert({
			subscription_id: subscription.id,
			metric: "gpt4o_tokens",
			threshold: 1000,
		});
		const send = async (metadata: Record<string, unknown>) => {
			const response = await post(
				"/v1/actions",
				{ agent_key: agentKey, action_type: "llm_call", metadata },
				{ key: await sdkKey() },
			);
			expect(response.status).toBe(201);
		};
		await send({ model: "gpt-4o-mini", tokens: 5000 });
		await send({ model: "gpt-4o", tokens: 999 });
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(alert.id)).toEqual([]);
		await send({ model: "gpt-4o", tokens: 1 });
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(alert.id)).toMatchObject([{ metric: "gpt4o_tokens", value: 1000 }]);
	});

	it("compares a total amount alert with what was used, not with a minimum commitment's top-up", async () => {
		const { subscription, instances } = await customer({ ...plan, minimum_amount: 500 });
		const [agentKey] = instances as [string];
		// Used: 10 + 100 × 0.01 = 11 (the period bills 500). 11 < 12: armed; one more call → 11.01… still armed;
		// 100 more → 12.01 ≥ 12: triggered.
		const alert = await createAlert({ subscription_id: subscription.id, threshold: 12 });
		await sendCalls(agentKey, 100);
		await sendCalls(agentKey, 1);
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(alert.id)).toEqual([]);
		await sendCalls(agentKey, 100);
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(alert.id)).toMatchObject([{ value: 12.01 }]);
	});

	it("triggers at once when created over a threshold already reached, and re-arms in a new period", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		await sendCalls(agentKey, 3);
		const alert = await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 2 });
		const stub = subscriptionAccumulator(subscription.id);
		await stub.flush();
		expect(await triggeredEvents(alert.id)).toMatchObject([{ value: 3 }]);

		// As if that trigger had been last period's: this period's next event triggers it again, once.
		await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
			state.storage.sql.exec("UPDATE alert_triggers SET period = ?", shiftPeriod(currentPeriod(), -1));
			(instance as unknown as { alerts: { forget(): void } }).alerts.forget();
		});
		await sendCalls(agentKey, 1);
		await sendCalls(agentKey, 1);
		await stub.flush();
		expect(await triggeredEvents(alert.id)).toMatchObject([{ value: 3 }, { value: 4 }]);
	});
});

describe("GET /v1/entitlements", () => {
	it("flips to allowed: false when a block alert triggers, for SDK keys too, and back when it is deleted", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		const key = await sdkKey();
		const budget = await createAlert({
			subscription_id: subscription.id,
			metric: "calls",
			threshold: 5,
			block: true,
		});
		// A non-blocking alert that triggers too does not block.
		await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 1 });

		const before = await get(`/v1/entitlements?agent_key=${agentKey}`, { key });
		expect(before.status).toBe(200);
		expect(before.body).toEqual({
			agent_key: agentKey,
			subscription_id: subscription.id,
			allowed: true,
			blocked_by: [],
			budget: null,
		});

		await sendCalls(agentKey, 4);
		expect((await get(`/v1/entitlements?agent_key=${agentKey}`, { key })).body.allowed).toBe(true);
		await sendCalls(agentKey, 1);
		// No flush needed: the accumulator answers.
		expect((await get(`/v1/entitlements?agent_key=${agentKey}`, { key })).body).toEqual({
			agent_key: agentKey,
			subscription_id: subscription.id,
			allowed: false,
			blocked_by: [budget.id],
			budget: null,
		});
		// Events are never refused for it.
		await sendCalls(agentKey, 1);

		expect((await del(`/v1/alerts/${budget.id}`)).status).toBe(204);
		expect((await get(`/v1/entitlements?agent_key=${agentKey}`, { key })).body).toMatchObject({
			allowed: true,
			blocked_by: [],
		});
	});

	it("allows an instance in no subscription, and refuses a missing or bad agent_key", async () => {
		const lone = instanceKey("lone");
		expect((await get(`/v1/entitlements?agent_key=${lone}`)).body).toEqual({
			agent_key: lone,
			subscription_id: null,
			allowed: true,
			blocked_by: [],
			budget: null,
		});
		expectError(await get("/v1/entitlements"), 400, "validation_error");
		expectError(await get("/v1/entitlements?agent_key=a%20b"), 400, "validation_error");
	});
});

describe("alert state through the accumulator's alarm", () => {
	it("shows triggered after the alarm's flush, as it does in production (no explicit flush)", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		const alert = await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 3 });
		await sendCalls(agentKey, 3);
		await runDurableObjectAlarm(subscriptionAccumulator(subscription.id));
		const read = await get(`/v1/alerts/${alert.id}`);
		expect(read.body).toMatchObject({ status: "triggered" });
		expect(await triggeredEvents(alert.id)).toHaveLength(1);
	});
});

describe("an alert created over a threshold already reached", () => {
	it("triggers at once, and shows it after the alarm's flush", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		await sendCalls(agentKey, 9);
		await subscriptionAccumulator(subscription.id).flush();
		const alert = await createAlert({ subscription_id: subscription.id, metric: "calls", threshold: 5 });
		await runDurableObjectAlarm(subscriptionAccumulator(subscription.id));
		expect((await get(`/v1/alerts/${alert.id}`)).body).toMatchObject({ status: "triggered" });
		expect(await triggeredEvents(alert.id)).toMatchObject([{ value: 9 }]);
	});
});
