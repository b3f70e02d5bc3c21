import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, patch, post } from "../helpers";
import {
	createPlan,
	instanceAccumulator,
	outboxEvents,
	subscribe,
	subscriptionAccumulator,
} from "./fixtures";

describe("POST /v1/subscriptions/{id}/cancel", () => {
	it("cancels, keeps the instances it had, and frees them", async () => {
		const { subscription, keys } = await subscribe();
		const response = await post(`/v1/subscriptions/${subscription.id}/cancel`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual({
			...subscription,
			status: "cancelled",
			cancelled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
		});
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(response.body);
		const open = await env.DB.prepare(
			"SELECT count(*) AS n FROM subscription_instances WHERE subscription_id = ? AND removed_at IS NULL",
		)
			.bind(subscription.id)
			.first();
		expect(open?.n).toBe(0);
		// The instance can join another subscription now.
		expect((await subscribe(keys)).subscription.agent_instance_ids).toEqual(keys);
	});

	it("emits subscription.cancelled and hands the instances back to their own accumulators", async () => {
		const { subscription, account, plan, keys } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`);
		const events = await outboxEvents("subscription.cancelled", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => e.data)).toEqual([
			{
				subscription_id: subscription.id,
				account_id: account.id,
				rate_plan_id: plan.id,
				rate_plan_version: 1,
				pending_rate_plan_id: null,
				pending_plan_change: null,
				agent_instance_ids: keys,
				status: "cancelled",
				billing_currency: "USD",
			},
		]);
		expect((await subscriptionAccumulator(subscription.id).holdings()).map((h) => h.held)).toEqual([false]);
		expect((await instanceAccumulator(keys[0] as string).holdings()).map((h) => h.held)).toEqual([true]);
	});

	it("drops a pending plan change", async () => {
		const { subscription } = await subscribe();
		const next = await createPlan();
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.id });
		const response = await post(`/v1/subscriptions/${subscription.id}/cancel`);
		expect(response.body.pending_rate_plan_id).toBeNull();
		const rows = await env.DB.prepare(
			"SELECT count(*) AS n FROM subscription_plans WHERE subscription_id = ?",
		)
			.bind(subscription.id)
			.first();
		expect(rows?.n).toBe(1);
	});

	it("answers 409 when cancelling twice, also when both arrive at once", async () => {
		const first = await subscribe();
		await post(`/v1/subscriptions/${first.subscription.id}/cancel`);
		expect(
			expectError(await post(`/v1/subscriptions/${first.subscription.id}/cancel`), 409, "conflict").message,
		).toContain("already cancelled");

		const { subscription } = await subscribe();
		const responses = await Promise.all(
			[1, 2, 3].map(() => post(`/v1/subscriptions/${subscription.id}/cancel`)),
		);
		expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409]);
		const events = await outboxEvents("subscription.cancelled", (d) => d.subscription_id === subscription.id);
		expect(events).toHaveLength(1);
	});

	it("answers 404 for an unknown subscription, and 403 to read-only keys", async () => {
		expectError(await post("/v1/subscriptions/sub_missing/cancel"), 404, "not_found");
		const { subscription } = await subscribe();
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/cancel`, undefined, {
				key: await createKey("read-only"),
			}),
			403,
			"forbidden",
		);
	});
});
