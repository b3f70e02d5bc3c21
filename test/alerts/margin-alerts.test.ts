import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { expectError, get, post } from "../helpers";
import { currentPeriod, customer, shiftPeriod } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";
import { captureQueue, consume, createEndpoint, dispatchFor, stubReceiver } from "../webhooks/fixtures";
import { sendCalls, triggeredEvents } from "./fixtures";

// Margin alerts (docs/margins.md#margin-alerts): evaluated by the accumulator on ingest, from the revenue so far
// (as GET /v1/usage rates it) and the costs it computed for the period's events; one alert.triggered per period.
// Base fee $10, calls $0.01 each.
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
// gpt-4o at 2.5 / 10 / 1.25 per million: (2,500 + 5,000 + 250) / 1,000,000 = 0.00775 a call.
const GPT4O_CALL = { model: "gpt-4o", input_tokens: 1000, output_tokens: 500, cached_input_tokens: 200 };

afterEach(() => {
	vi.restoreAllMocks();
});

async function marginAlert(body: Record<string, unknown>) {
	const response = await post("/v1/alerts", { type: "margin", ...body });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; status: string };
}

describe("POST /v1/alerts with type margin", () => {
	it("creates an armed margin alert; every alert shows its type", async () => {
		const { subscription, account } = await customer(plan);
		const response = await post("/v1/alerts", {
			subscription_id: subscription.id,
			type: "margin",
			threshold: -12.5,
			min_costs: 50,
			name: "Losing money",
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^alr_[0-9a-z]{26}$/),
			subscription_id: subscription.id,
			account_id: account.id,
			type: "margin",
			metric: null,
			threshold: -12.5,
			min_costs: 50,
			name: "Losing money",
			block: false,
			status: "armed",
			triggered_at: null,
			billing_period: currentPeriod(),
			created_at: expect.stringMatching(/Z$/),
		});
		expect(
			(await marginAlert({ subscription_id: subscription.id, threshold: 100 })) as unknown,
		).toMatchObject({
			min_costs: 0,
			threshold: 100,
		});
		const usage = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 5 });
		expect(usage.body.type).toBe("usage");
		expect(usage.body).not.toHaveProperty("min_costs");
		const list = await get(`/v1/alerts?subscription_id=${subscription.id}`);
		expect(list.body.alerts.map((a: { type: string }) => a.type)).toEqual(["usage", "margin", "margin"]);
		expect((await get(`/v1/alerts/${response.body.id}`)).body).toEqual(response.body);
	});

	it("refuses metric, block, thresholds out of -10000..100, bad min_costs and unknown types; stores nothing", async () => {
		const { subscription } = await customer(plan);
		const cases: [Record<string, unknown>, string][] = [
			[{ type: "margin", threshold: 10, metric: "calls" }, "metric"],
			[{ type: "margin", threshold: 10, metric: null }, "metric"],
			[{ type: "margin", threshold: 10, block: false }, "block"],
			[{ type: "margin", threshold: 100.01 }, "threshold"],
			[{ type: "margin", threshold: -10000.5 }, "threshold"],
			[{ type: "margin", threshold: "10" }, "threshold"],
			[{ type: "margin", threshold: 10, min_costs: -1 }, "min_costs"],
			[{ type: "margin", threshold: 10, min_costs: 0.0000000000001 }, "min_costs"],
			[{ type: "margin", threshold: 10, min_costs: 1e16 }, "min_costs"],
			[{ type: "usage", threshold: 10, min_costs: 1 }, "min_costs"],
			[{ threshold: 10, min_costs: 1 }, "min_costs"],
			[{ type: "usage", threshold: -10 }, "threshold"],
			[{ type: "budget", threshold: 10 }, "type"],
		];
		for (const [body, path] of cases) {
			const response = await post("/v1/alerts", { subscription_id: subscription.id, ...body });
			expectError(response, 400, "validation_error");
			expect(
				response.body.error.details.map((d: { path: string }) => d.path),
				JSON.stringify(body),
			).toContain(path);
		}
		const stored = await env.DB.prepare("SELECT count(*) AS n FROM alerts WHERE subscription_id = ?1")
			.bind(subscription.id)
			.first<{ n: number }>();
		expect(stored?.n).toBe(0);
		expect((await get(`/v1/alerts?subscription_id=${subscription.id}`)).body.total).toBe(0);
	});
});

describe("margin alert evaluation on ingest", () => {
	it("fires once, from the event that takes the margin below the threshold, with revenue, costs and margin", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		const endpoint = await createEndpoint({ events: ["alert.triggered"] });
		// Deliveries are queued here and sent to a stand-in receiver, not on the local queue's timers.
		const receiver = stubReceiver();
		const queue = captureQueue();
		const alert = await marginAlert({ subscription_id: subscription.id, threshold: 20, min_costs: 1 });

		// Revenue 10.03, costs 3 × 0.00775 = 0.02325 from the model prices: no trigger.
		await sendCalls(agentKey, 3, GPT4O_CALL);
		// Revenue 10.04, costs 0.52325: margin 94.79%, and costs under min_costs anyway.
		await sendCalls(agentKey, 1, { cost: 0.5 });
		expect(await triggeredEvents(alert.id)).toEqual([]);
		// Revenue 10.05, costs 8.52325: margin 1.52675 / 10.05 = 15.19% < 20%.
		await sendCalls(agentKey, 1, { cost: 8 });
		// Already triggered this period: no second one.
		await sendCalls(agentKey, 2, { cost: 3 });
		await subscriptionAccumulator(subscription.id).flush();

		const expected = {
			alert_id: alert.id,
			account_id: subscription.account_id,
			subscription_id: subscription.id,
			type: "margin",
			metric: null,
			threshold: 20,
			value: 15.19,
			billing_period: currentPeriod(),
			block: false,
			revenue: 10.05,
			costs: 8.52325,
			margin_percent: 15.19,
		};
		expect(await triggeredEvents(alert.id)).toEqual([expected]);
		expect((await get(`/v1/alerts/${alert.id}`)).body).toMatchObject({ status: "triggered" });

		// The webhook is delivered with the new fields.
		const messages = [...queue.take().map((m) => m.body), ...(await dispatchFor(queue, endpoint.id))];
		await consume(messages);
		const delivered = receiver.received.map((request) => request.json.data);
		expect(delivered).toContainEqual(expected);

		// As if that trigger had been last period's: this period's next event triggers it again, once.
		const stub = subscriptionAccumulator(subscription.id);
		await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
			state.storage.sql.exec("UPDATE alert_triggers SET period = ?", shiftPeriod(currentPeriod(), -1));
			(instance as unknown as { alerts: { forget(): void } }).alerts.forget();
		});
		await sendCalls(agentKey, 1);
		await sendCalls(agentKey, 1);
		await stub.flush();
		// Revenue 10.08 (8 calls), costs 14.52325: (10.08 − 14.52325) / 10.08 = −44.08%.
		expect((await triggeredEvents(alert.id)).map((e) => e.value)).toEqual([15.19, -44.08]);
	});

	it("does not fire while costs are at or under min_costs, then fires past them", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		const alert = await marginAlert({ subscription_id: subscription.id, threshold: 100, min_costs: 5 });
		await sendCalls(agentKey, 1, { cost: 4 });
		await sendCalls(agentKey, 1, { cost: 1 });
		await subscriptionAccumulator(subscription.id).flush();
		// Costs exactly 5: not more than min_costs.
		expect(await triggeredEvents(alert.id)).toEqual([]);
		await sendCalls(agentKey, 1, { cost: 0.01 });
		await subscriptionAccumulator(subscription.id).flush();
		// Revenue 10.03, costs 5.01: margin 5.02 / 10.03 = 50.05%.
		expect(await triggeredEvents(alert.id)).toMatchObject([
			{ revenue: 10.03, costs: 5.01, margin_percent: 50.05 },
		]);
	});

	it("rates revenue as GET /v1/usage does: a prorated base fee from the subscription's start", async () => {
		const { subscription, instances } = await customer({ ...plan, base_fee: 30, prorate: true });
		const [agentKey] = instances as [string];
		const alert = await marginAlert({ subscription_id: subscription.id, threshold: 100 });
		await sendCalls(agentKey, 1, { cost: 1000 });
		await subscriptionAccumulator(subscription.id).flush();
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status).toBe(200);
		const [event] = await triggeredEvents(alert.id);
		expect(event).toMatchObject({ type: "margin", revenue: usage.body.total, costs: 1000 });
		// Started this month: unless it is the first instant of the month, less than the whole fee.
		expect(event.revenue).toBeLessThanOrEqual(30.01);
	});

	it("counts revenue 0 with costs as below any threshold", async () => {
		const { subscription, instances } = await customer({
			charges: [{ ...plan.charges[0], included_quantity: 100 }],
		});
		const [agentKey] = instances as [string];
		const alert = await marginAlert({ subscription_id: subscription.id, threshold: -10000 });
		await sendCalls(agentKey, 1, { cost: 0.001 });
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(alert.id)).toMatchObject([
			{ type: "margin", revenue: 0, costs: 0.001, margin_percent: 0, value: 0 },
		]);
	});

	it("triggers at once when created over a margin already below, costs in another currency aside", async () => {
		const { subscription, instances } = await customer(plan);
		const [agentKey] = instances as [string];
		await sendCalls(agentKey, 1, { cost: 9, cost_currency: "EUR" });
		await subscriptionAccumulator(subscription.id).flush();
		const ignored = await marginAlert({ subscription_id: subscription.id, threshold: 50 });
		await subscriptionAccumulator(subscription.id).flush();
		expect(await triggeredEvents(ignored.id)).toEqual([]);
		await sendCalls(agentKey, 1, { cost: 9 });
		await subscriptionAccumulator(subscription.id).flush();
		const later = await marginAlert({ subscription_id: subscription.id, threshold: 50 });
		await subscriptionAccumulator(subscription.id).flush();
		// Revenue 10.02, costs 9 (USD only): margin 10.18%.
		expect(await triggeredEvents(ignored.id)).toMatchObject([{ margin_percent: 10.18 }]);
		expect(await triggeredEvents(later.id)).toMatchObject([{ margin_percent: 10.18 }]);
	});
});
