/**
 * An instance is in one subscription at a time, also in the past: a new subscription's `started_at` must not reach
 * into a time when one of its instances belonged to another subscription (with a prorating plan both would bill
 * that time). Instance changes by PATCH apply from the moment of the change, so they cannot reach back.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, expectError, patch, post } from "../helpers";
import { createPlan, outboxEvents, uniqueKey } from "../subscriptions/fixtures";

const MINUTE = 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function subscribeFrom(keys: string[], startedAt: string) {
	const account = await createAccount();
	const plan = await createPlan({ base_fee: 30, prorate: true, charges: [] });
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: keys,
		started_at: startedAt,
	});
	return { account, plan, response };
}

async function created(keys: string[], startedAt: string) {
	const { response } = await subscribeFrom(keys, startedAt);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; account_id: string; cancelled_at: string | null };
}

async function cancel(id: string) {
	const response = await post(`/v1/subscriptions/${id}/cancel`, {});
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as { cancelled_at: string };
}

async function subscriptionsOf(accountId: string) {
	const { results } = await env.DB.prepare("SELECT id FROM subscriptions WHERE account_id = ?")
		.bind(accountId)
		.all();
	return results;
}

describe("POST /v1/subscriptions started_at against earlier subscriptions", () => {
	it("refuses a start inside the time an instance belonged to a cancelled subscription, storing nothing", async () => {
		const shared = uniqueKey();
		const a = await created([shared], ago(60 * MINUTE));
		const { cancelled_at } = await cancel(a.id);

		const { account, response } = await subscribeFrom([uniqueKey(), shared], ago(30 * MINUTE));
		const error = expectError(response, 409, "conflict");
		expect(error.message).toContain(`'${shared}'`);
		expect(error.message).toContain(a.id);
		expect(error.message).toContain(cancelled_at);
		expect(await subscriptionsOf(account.id)).toEqual([]);
		expect(await outboxEvents("subscription.created", (data) => data.account_id === account.id)).toEqual([]);
	});

	it("refuses a start before an instance was removed from another subscription by PATCH", async () => {
		const [shared, other] = [uniqueKey(), uniqueKey()];
		const a = await created([shared, other], ago(60 * MINUTE));
		const removed = await patch(`/v1/subscriptions/${a.id}`, { agent_instance_ids: [other] });
		expect(removed.status, JSON.stringify(removed.body)).toBe(200);

		const { response } = await subscribeFrom([shared], ago(30 * MINUTE));
		expect(expectError(response, 409, "conflict").message).toContain(a.id);
	});

	it("allows a start exactly at the instant the other subscription let the instance go", async () => {
		const shared = uniqueKey();
		const a = await created([shared], ago(60 * MINUTE));
		const { cancelled_at } = await cancel(a.id);
		const b = await created([shared], cancelled_at);
		expect(b).toMatchObject({ status: "active", started_at: cancelled_at, agent_instance_ids: [shared] });
	});

	it("allows a back-dated start for instances that were in no subscription then", async () => {
		const a = await created([uniqueKey()], ago(60 * MINUTE));
		await cancel(a.id);
		const b = await created([uniqueKey()], ago(30 * MINUTE));
		expect(b.cancelled_at).toBeNull();
	});
});

describe("PATCH /v1/subscriptions/{id} adding an instance that left another subscription", () => {
	it("is allowed: the instance joins from now on, after it left", async () => {
		const shared = uniqueKey();
		const a = await created([shared], ago(60 * MINUTE));
		const { cancelled_at } = await cancel(a.id);
		// B started before A let the instance go, with another instance.
		const b = await created([uniqueKey()], ago(90 * MINUTE));
		const response = await patch(`/v1/subscriptions/${b.id}`, { agent_instance_ids: [shared] });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const joined = await env.DB.prepare(
			"SELECT added_at FROM subscription_instances WHERE subscription_id = ? AND agent_key = ?",
		)
			.bind(b.id, shared)
			.first<{ added_at: string }>();
		expect((joined?.added_at ?? "") >= cancelled_at).toBe(true);
	});
});
