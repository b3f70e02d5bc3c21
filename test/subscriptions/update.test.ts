import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addPeriods } from "../../src/lib/time";
import { createAccount, del, expectError, get, patch, post } from "../helpers";
import {
	createPlan,
	instanceAccumulator,
	outboxEvents,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "./fixtures";

const currentPeriod = () => new Date().toISOString().slice(0, 7);

describe("PATCH /v1/subscriptions/{id}: instances", () => {
	it("adds and removes instances at once, keeping membership history", async () => {
		const [kept, removed, added] = [uniqueKey(), uniqueKey(), uniqueKey()];
		const { subscription } = await subscribe([kept, removed]);
		const response = await patch(`/v1/subscriptions/${subscription.id}`, {
			agent_instance_ids: [added, kept],
		});
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toEqual({ ...subscription, agent_instance_ids: [kept, added] });
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(response.body);

		const rows = await env.DB.prepare(
			"SELECT agent_key, removed_at IS NOT NULL AS closed FROM subscription_instances WHERE subscription_id = ? ORDER BY id",
		)
			.bind(subscription.id)
			.all();
		expect(rows.results).toEqual([
			{ agent_key: kept, closed: 0 },
			{ agent_key: removed, closed: 1 },
			{ agent_key: added, closed: 0 },
		]);
	});

	it("emits subscription.updated with the new state", async () => {
		const { subscription, account, plan } = await subscribe();
		const added = uniqueKey();
		await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: [added] });
		const events = await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => e.data)).toEqual([
			{
				subscription_id: subscription.id,
				account_id: account.id,
				rate_plan_id: plan.id,
				rate_plan_version: 1,
				pending_rate_plan_id: null,
				pending_plan_change: null,
				agent_instance_ids: [added],
				status: "active",
				billing_currency: "USD",
			},
		]);
	});

	it("tells the accumulators who holds the moved instances", async () => {
		const [stays, leaves] = [uniqueKey(), uniqueKey()];
		const { subscription } = await subscribe([stays, leaves]);
		await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: [stays] });
		const held = (await subscriptionAccumulator(subscription.id).holdings()).map((h) => [h.agentKey, h.held]);
		expect(held).toEqual(
			expect.arrayContaining([
				[stays, true],
				[leaves, false],
			]),
		);
		const own = await instanceAccumulator(leaves).holdings();
		expect(own.map((h) => [h.agentKey, h.held])).toEqual([[leaves, true]]);
	});

	it("answers 409 for an instance that is in another active subscription", async () => {
		const other = await subscribe();
		const { subscription } = await subscribe();
		const response = await patch(`/v1/subscriptions/${subscription.id}`, {
			agent_instance_ids: [...subscription.agent_instance_ids, other.keys[0]],
		});
		expect(expectError(response, 409, "conflict").message).toContain(other.subscription.id);
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(subscription);
	});

	it("accepts an instance released by another subscription", async () => {
		const other = await subscribe();
		const { subscription } = await subscribe();
		await patch(`/v1/subscriptions/${other.subscription.id}`, { agent_instance_ids: [uniqueKey()] });
		const response = await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: other.keys });
		expect(response.status).toBe(200);
		expect(response.body.agent_instance_ids).toEqual(other.keys);
	});

	it("writes nothing and emits nothing when nothing changes", async () => {
		const { subscription } = await subscribe();
		const response = await patch(`/v1/subscriptions/${subscription.id}`, {
			agent_instance_ids: subscription.agent_instance_ids,
			rate_plan_id: subscription.rate_plan_id,
		});
		expect(response.body).toEqual(subscription);
		expect(await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id)).toEqual(
			[],
		);
	});
});

describe("PATCH /v1/subscriptions/{id}: plan", () => {
	it("keeps the current plan until the next period and shows the new one as pending", async () => {
		const { subscription, plan } = await subscribe();
		const next = await createPlan({ name: "Next" });
		const response = await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.id });
		expect(response.status).toBe(200);
		expect(response.body).toEqual({
			...subscription,
			rate_plan_id: plan.id,
			pending_rate_plan_id: next.id,
			pending_plan_change: {
				rate_plan_id: next.id,
				version: 1,
				at: `${addPeriods(currentPeriod(), 1)}-01T00:00:00.000Z`,
			},
		});
		const history = await env.DB.prepare(
			"SELECT effective_period, rate_plan_id FROM subscription_plans WHERE subscription_id = ? ORDER BY effective_period",
		)
			.bind(subscription.id)
			.all();
		expect(history.results).toEqual([
			{ effective_period: currentPeriod(), rate_plan_id: plan.id },
			{ effective_period: addPeriods(currentPeriod(), 1), rate_plan_id: next.id },
		]);
		const events = await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => e.data.pending_rate_plan_id)).toEqual([next.id]);
	});

	it("makes the pending plan the plan once its period has started", async () => {
		const { subscription, plan } = await subscribe();
		const next = await createPlan({ name: "Next" });
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.id });
		// Time passes: the history rows move one month back, so the pending row's period is the current one.
		await env.DB.prepare(
			"UPDATE subscription_plans SET effective_period = ? WHERE subscription_id = ? AND rate_plan_id = ?",
		)
			.bind(addPeriods(currentPeriod(), -1), subscription.id, plan.id)
			.run();
		await env.DB.prepare(
			"UPDATE subscription_plans SET effective_period = ? WHERE subscription_id = ? AND rate_plan_id = ?",
		)
			.bind(currentPeriod(), subscription.id, next.id)
			.run();
		const read = await get(`/v1/subscriptions/${subscription.id}`);
		expect(read.body).toMatchObject({ rate_plan_id: next.id, pending_rate_plan_id: null });
		const row = await env.DB.prepare(
			"SELECT rate_plan_id, pending_rate_plan_id FROM subscriptions WHERE id = ?",
		)
			.bind(subscription.id)
			.first();
		expect(row).toEqual({ rate_plan_id: next.id, pending_rate_plan_id: null });
	});

	it("withdraws a pending change when the current plan is chosen again", async () => {
		const { subscription, plan } = await subscribe();
		const next = await createPlan({ name: "Next" });
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: next.id });
		const response = await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: plan.id });
		expect(response.body).toMatchObject({ rate_plan_id: plan.id, pending_rate_plan_id: null });
		const rows = await env.DB.prepare(
			"SELECT count(*) AS n FROM subscription_plans WHERE subscription_id = ?",
		)
			.bind(subscription.id)
			.first();
		expect(rows?.n).toBe(1);
	});

	it("answers 404 for an unknown plan and 409 for an archived or foreign-currency plan", async () => {
		const { subscription } = await subscribe();
		const url = `/v1/subscriptions/${subscription.id}`;
		expect(
			expectError(await patch(url, { rate_plan_id: "plan_missing" }), 404, "not_found").message,
		).toContain("rate plan");
		const archived = await createPlan();
		await del(`/v1/pricing/rate-plans/${archived.id}`);
		expect(expectError(await patch(url, { rate_plan_id: archived.id }), 409, "conflict").message).toContain(
			"archived",
		);
		const euro = await createPlan({ currency: "EUR" });
		expect(expectError(await patch(url, { rate_plan_id: euro.id }), 409, "conflict").message).toContain(
			"EUR",
		);
		expect((await get(url)).body).toEqual(subscription);
	});
});

describe("PATCH /v1/subscriptions/{id}: billing_currency", () => {
	it("refuses any billing_currency (400): it is fixed at creation", async () => {
		const { subscription } = await subscribe();
		const url = `/v1/subscriptions/${subscription.id}`;
		for (const currency of ["EUR", "USD", null]) {
			const error = expectError(await patch(url, { billing_currency: currency }), 400, "validation_error");
			expect(error.details?.map((d) => d.path)).toContain("billing_currency");
		}
		expect((await get(url)).body).toEqual(subscription);
	});
});

describe("PATCH /v1/subscriptions/{id}: errors", () => {
	it("answers 404 for an unknown subscription", async () => {
		expectError(
			await patch("/v1/subscriptions/sub_missing", { agent_instance_ids: ["k"] }),
			404,
			"not_found",
		);
	});

	it("answers 409 for a cancelled subscription", async () => {
		const { subscription } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`);
		const response = await patch(`/v1/subscriptions/${subscription.id}`, {
			agent_instance_ids: [uniqueKey()],
		});
		expectError(response, 409, "conflict");
	});

	it.each([
		["an unknown field", { account_id: "acct_x" }, "account_id"],
		["an empty instance list", { agent_instance_ids: [] }, "agent_instance_ids"],
	])("answers 400 for %s", async (_, body, path) => {
		const { subscription } = await subscribe();
		const error = expectError(
			await patch(`/v1/subscriptions/${subscription.id}`, body),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("serialises concurrent changes: every stored state is announced, none is lost", async () => {
		const account = await createAccount();
		const plan = await createPlan();
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
		});
		const id = created.body.id;
		const targets = [[uniqueKey()], [uniqueKey()], [uniqueKey()]];
		const responses = await Promise.all(
			targets.map((keys) => patch(`/v1/subscriptions/${id}`, { agent_instance_ids: keys })),
		);
		for (const r of responses) expect([200, 409]).toContain(r.status);
		const final = (await get(`/v1/subscriptions/${id}`)).body;
		const open = await env.DB.prepare(
			"SELECT agent_key FROM subscription_instances WHERE subscription_id = ? AND removed_at IS NULL",
		)
			.bind(id)
			.all();
		expect(open.results.map((r) => r.agent_key)).toEqual(final.agent_instance_ids);
		expect(final.agent_instance_ids).toHaveLength(1);
		const last = (await outboxEvents("subscription.updated", (d) => d.subscription_id === id)).at(-1);
		expect(last?.data.agent_instance_ids).toEqual(final.agent_instance_ids);
	});
});
