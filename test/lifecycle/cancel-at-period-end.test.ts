/**
 * Cancellation at period end (CONTRACT §19): the subscription stays active with cancel_at until the next
 * period's first instant; the cron cancels it then and emits subscription.cancelled at that moment.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { periodWindow } from "../../src/billing-period/period";
import { database } from "../../src/db/client";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { subscriptionsInPeriod } from "../../src/invoicing/load";
import { expectError, get, patch, post } from "../helpers";
import { currentPeriod, generateOne, linesOf } from "../invoicing/fixtures";
import { createPlan, outboxEvents, sendAction, subscribe } from "../subscriptions/fixtures";
import { monthStart } from "./fixtures";

const worker: ExportedHandler<Env> = entry;
const nextPeriodStart = () => monthStart(1).toISOString();

afterEach(() => {
	vi.restoreAllMocks();
});

async function runCron(cron: string, scheduledTime: number) {
	// The monthly run also queues invoice jobs; they are not what this file tests.
	vi.spyOn(env.INVOICE_QUEUE, "sendBatch").mockResolvedValue({
		metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } },
	});
	await worker.scheduled?.(createScheduledController({ cron, scheduledTime }), env, createExecutionContext());
}

describe("POST /v1/subscriptions/{id}/cancel {at_period_end: true}", () => {
	it("keeps the subscription active with cancel_at, announces the change, and still attributes events", async () => {
		const { subscription, keys } = await subscribe();
		const response = await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toEqual({ ...subscription, cancel_at: nextPeriodStart() });
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(response.body);
		const updated = await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id);
		expect(updated.map((e) => e.data)).toEqual([
			expect.objectContaining({ subscription_id: subscription.id, status: "active" }),
		]);
		expect(
			await outboxEvents("subscription.cancelled", (d) => d.subscription_id === subscription.id),
		).toEqual([]);
		const action = await sendAction({ agent_key: keys[0] });
		expect(action.body.subscription_id).toBe(subscription.id);
	});

	it("answers 409 when already set to cancel, and a plan change then has no next period", async () => {
		const { subscription } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true }),
			409,
			"conflict",
		);
		const other = await createPlan({ base_fee: 5 });
		expectError(
			await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: other.id }),
			409,
			"conflict",
		);
	});

	it("drops a pending plan change", async () => {
		const { subscription } = await subscribe();
		const other = await createPlan({ base_fee: 5 });
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: other.id });
		const response = await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		expect(response.body).toMatchObject({ pending_rate_plan_id: null, cancel_at: nextPeriodStart() });
	});

	it("may still be cancelled at once, which clears cancel_at", async () => {
		const { subscription } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		const now = await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
		expect(now.status).toBe(200);
		expect(now.body).toMatchObject({ status: "cancelled", cancel_at: null });
		expect(now.body.cancelled_at < nextPeriodStart()).toBe(true);
	});

	it.each([
		["an unknown field", { at_period_end: true, when: "now" }],
		["a non-boolean", { at_period_end: "yes" }],
	])("answers 400 for %s and changes nothing", async (_, body) => {
		const { subscription } = await subscribe();
		expectError(await post(`/v1/subscriptions/${subscription.id}/cancel`, body), 400, "validation_error");
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(subscription);
	});

	it("answers 404 for an unknown subscription", async () => {
		expectError(
			await post("/v1/subscriptions/sub_missing/cancel", { at_period_end: true }),
			404,
			"not_found",
		);
	});
});

describe("the cron cancels at the period boundary", () => {
	it("does nothing before cancel_at, then cancels as of cancel_at and emits subscription.cancelled", async () => {
		const { subscription } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });

		await runCron("*/5 * * * *", Date.now());
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.status).toBe("active");

		await runCron("5 0 1 * *", Date.parse(nextPeriodStart()) + 5 * 60_000);
		const after = await get(`/v1/subscriptions/${subscription.id}`);
		expect(after.body).toEqual({
			...subscription,
			status: "cancelled",
			cancelled_at: nextPeriodStart(),
			cancel_at: null,
		});
		const cancelled = await outboxEvents(
			"subscription.cancelled",
			(d) => d.subscription_id === subscription.id,
		);
		expect(cancelled.map((e) => e.data)).toEqual([expect.objectContaining({ status: "cancelled" })]);
		const open = await env.DB.prepare(
			"SELECT count(*) AS n, min(removed_at) AS at FROM subscription_instances WHERE subscription_id = ?1",
		)
			.bind(subscription.id)
			.first<{ n: number; at: string }>();
		expect(open).toEqual({ n: 1, at: nextPeriodStart() });

		// Another run finds nothing due: one subscription.cancelled only.
		await runCron("*/5 * * * *", Date.parse(nextPeriodStart()) + 10 * 60_000);
		expect(
			await outboxEvents("subscription.cancelled", (d) => d.subscription_id === subscription.id),
		).toHaveLength(1);
	});

	it("bills the whole current period, and the next period not at all", async () => {
		const { subscription, account } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		const next = periodWindow(monthStart(1).toISOString().slice(0, 7));
		const inNext = async () =>
			(await subscriptionsInPeriod(database(env.DB), { environment: "live" }, next, account.id)).map(
				(s) => s.id,
			);
		// Due before the next period begins: not in it, even while the cron has not come by.
		expect(await inNext()).toEqual([]);
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)[0]).toEqual(["base_fee", 1, 10]);
		await runCron("5 0 1 * *", Date.parse(nextPeriodStart()) + 5 * 60_000);
		expect(await inNext()).toEqual([]);
	});

	it("bills the whole current period of a prorating plan: it is active until the period ends", async () => {
		const plan = await createPlan({ base_fee: 30, prorate: true, charges: [] });
		const { account } = await subscribe();
		const prorating = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [`p-${crypto.randomUUID().slice(0, 8)}`],
		});
		await env.DB.prepare("UPDATE subscriptions SET started_at = ?1 WHERE id = ?2")
			.bind(monthStart(0).toISOString(), prorating.body.id)
			.run();
		await post(`/v1/subscriptions/${prorating.body.id}/cancel`, { at_period_end: true });
		const usage = await get(`/v1/usage?subscription_id=${prorating.body.id}`);
		expect(usage.body.charges[0]).toMatchObject({ metric: "base_fee", amount: 30 });
	});
});
