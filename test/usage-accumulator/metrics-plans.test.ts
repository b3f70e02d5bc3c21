import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { hasUnflushed } from "../../src/durable-objects/usage-accumulator/parts/flush";
import { PlanBook } from "../../src/durable-objects/usage-accumulator/parts/period-plans";
import { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { combineQuantities, sourceKey } from "../../src/pricing/sources";
import { patch, post } from "../helpers";
import { currentPeriod, customer, sdkKey, shiftPeriod } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";

// Which sources an accumulator counts follows the plan in effect for each period: a plan change at the next
// period, and a filter on a key no earlier plan used, counted again from the raw events kept.

const byModel = (model: string) => ({
	metric: `tokens_${model.replace(/\W/g, "_")}`,
	source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens", filter: { model } },
	model: "per_unit",
	unit_price: 0.01,
});
const byRegion = {
	metric: "eu_tokens",
	source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens", filter: { region: "eu" } },
	model: "per_unit",
	unit_price: 0.02,
};

function event(agentKey: string, timestamp: string, metadata: Record<string, unknown>): MeteringEvent {
	return {
		id: `act_${crypto.randomUUID().replace(/-/g, "").slice(0, 26)}`,
		kind: "action",
		agentKey,
		type: "llm_call",
		value: null,
		metadata: metadata as MeteringEvent["metadata"],
		timestamp,
		receivedAt: new Date().toISOString(),
		idempotencyKey: null,
	};
}

const quantityOf = (metrics: { source: string; quantity: string }[], charge: { source: unknown }) =>
	combineQuantities(metrics)
		.get(sourceKey(charge.source as Parameters<typeof sourceKey>[0]))
		?.toString() ?? "0";

describe("an accumulator of the earlier version", () => {
	it("gets the plan, metric and alert tables when it starts, and flushes as before", async () => {
		const stub = env.USAGE_ACCUMULATOR.get(
			env.USAGE_ACCUMULATOR.idFromName("live:sub:sub_upgradedaccumulator"),
		);
		await runInDurableObject(stub, (_, state) => {
			new AccumulatorStore(state.storage).remember("live:sub:sub_upgradedaccumulator", null);
			const added = ["plan_periods", "metrics", "metric_values", "alert_rules", "alert_triggers"];
			for (const table of added) state.storage.sql.exec(`DROP TABLE ${table}`);
			// What a restarted accumulator does when it opens its storage.
			new AccumulatorStore(state.storage);
			const tables = state.storage.sql
				.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
				.toArray()
				.map((row) => row.name);
			expect(tables).toEqual(expect.arrayContaining(added));
			expect(hasUnflushed(state.storage.sql)).toBe(false);
		});
	});
});

describe("the plan of each period", () => {
	it("counts the next period by the plan that takes effect then, a filter on a key the first plan never used", async () => {
		const { subscription, instances } = await customer({ charges: [byModel("gpt-4o")] });
		const [agentKey] = instances as [string];
		const next = await post("/v1/pricing/rate-plans", { name: "Next", charges: [byRegion] });
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.body.id });
		expect(changed.body.pending_rate_plan_id).toBe(next.body.id);

		// Events of the next period cannot be sent yet through the API; the accumulator is called as the router does.
		const period = currentPeriod();
		const nextPeriod = shiftPeriod(period, 1);
		const now = new Date().toISOString();
		const stub = subscriptionAccumulator(subscription.id);
		const response = await stub.record({
			name: `live:sub:${subscription.id}`,
			accountId: subscription.account_id,
			claims: {},
			events: JSON.stringify([
				event(agentKey, now, { model: "gpt-4o", region: "eu", tokens: 100 }),
				event(agentKey, `${nextPeriod}-01T00:00:00.000Z`, { model: "gpt-4o", region: "eu", tokens: 40 }),
				event(agentKey, `${nextPeriod}-01T00:00:01.000Z`, { model: "gpt-4o", region: "us", tokens: 2 }),
			]),
		});
		expect(response.results).toEqual(["processed", "processed", "processed"]);

		const thisMonth = await stub.metricsOf(period);
		const nextMonth = await stub.metricsOf(nextPeriod);
		// This period: gpt-4o tokens 100 (its plan has no region filter). Next: eu tokens 40 (no model filter).
		expect(quantityOf(thisMonth, byModel("gpt-4o"))).toBe("100");
		expect(quantityOf(thisMonth, byRegion)).toBe("0");
		expect(quantityOf(nextMonth, byRegion)).toBe("40");
		expect(quantityOf(nextMonth, byModel("gpt-4o"))).toBe("0");
	});

	it("counts a period again from the raw events when its plan is learnt after its events were counted", async () => {
		const { subscription, instances } = await customer({ charges: [byRegion] });
		const [agentKey] = instances as [string];
		const stub = subscriptionAccumulator(subscription.id);
		await runInDurableObject(stub, (instance: UsageAccumulator) => {
			instance.settings.flushDelayMs = 60_000;
		});
		const key = await sdkKey();
		const send = (metadata: Record<string, unknown>) =>
			post("/v1/actions", { agent_key: agentKey, action_type: "llm_call", metadata }, { key });
		expect((await send({ region: "eu", tokens: 5 })).status).toBe(201);
		expect((await send({ region: "us", tokens: 7 })).status).toBe(201);

		// What an accumulator of the earlier version holds: the events and daily rows, no plan, no metrics.
		await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
			state.storage.sql.exec("DELETE FROM plan_periods");
			state.storage.sql.exec("DELETE FROM metrics");
			const { store } = instance as unknown as { store: AccumulatorStore };
			(instance as unknown as { plans: PlanBook }).plans = new PlanBook(store, env);
		});
		expect(await stub.metricsOf(currentPeriod())).toEqual([]);

		// The next event makes it learn the plan: 5 (rebuilt from the raw events) + 11 = 16, the us event excluded.
		expect((await send({ region: "eu", tokens: 11 })).status).toBe(201);
		expect(quantityOf(await stub.metricsOf(currentPeriod()), byRegion)).toBe("16");
		await stub.flush();
		const stored = await env.DB.prepare("SELECT quantity FROM usage_metrics WHERE subscription_id = ?1")
			.bind(subscription.id)
			.all<{ quantity: string }>();
		expect(stored.results).toEqual([{ quantity: "16" }]);
	});
});
