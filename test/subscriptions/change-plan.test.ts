/**
 * POST /v1/subscriptions/{id}/change-plan, PATCH {rate_plan_id} as a change to the latest version, and
 * POST /v1/pricing/rate-plans/{id}/migrate (docs/plan-versions.md).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addPeriods } from "../../src/lib/time";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";
import { currentPeriod } from "../invoicing/fixtures";
import { newPlan, newVersion, outboxEvents, uniqueKey } from "./fixtures";

const nextPeriodStart = () => `${addPeriods(currentPeriod(), 1)}-01T00:00:00.000Z`;

async function subscribeTo(planId: string) {
	const account = await createAccount();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: planId,
		agent_instance_ids: [uniqueKey()],
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

const history = async (id: string) =>
	(
		await env.DB.prepare(
			"SELECT effective_period, rate_plan_id, rate_plan_version FROM subscription_plans WHERE subscription_id = ? ORDER BY effective_period",
		)
			.bind(id)
			.all()
	).results;

describe("POST /v1/subscriptions/{id}/change-plan", () => {
	it("moves to the latest version of its own plan at period end, by default", async () => {
		const plan = await newPlan();
		const subscription = await subscribeTo(plan.id);
		await newVersion(plan.id, { base_fee: 50 });
		const response = await post(`/v1/subscriptions/${subscription.id}/change-plan`, {});
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const change = { rate_plan_id: plan.id, version: 2, at: nextPeriodStart() };
		expect(response.body).toEqual({
			...subscription,
			pending_rate_plan_id: plan.id,
			pending_plan_change: change,
		});
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(response.body);
		expect(await history(subscription.id)).toEqual([
			{ effective_period: currentPeriod(), rate_plan_id: plan.id, rate_plan_version: 1 },
			{ effective_period: addPeriods(currentPeriod(), 1), rate_plan_id: plan.id, rate_plan_version: 2 },
		]);
		const events = await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => e.data.pending_plan_change)).toEqual([change]);
		const audit = await env.DB.prepare(
			"SELECT action FROM audit_records WHERE resource_id = ? AND action = 'subscription.updated'",
		)
			.bind(subscription.id)
			.all();
		expect(audit.results).toHaveLength(1);
		// The current period stays on version 1.
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.body.amount).toBe(20);
	});

	it("takes another plan at a given version; a later change replaces the pending one", async () => {
		const plan = await newPlan();
		const other = await newPlan({ name: "Scale", base_fee: 100 });
		await newVersion(other.id, { base_fee: 120 });
		const subscription = await subscribeTo(plan.id);
		const first = await post(`/v1/subscriptions/${subscription.id}/change-plan`, {
			rate_plan_id: other.id,
			version: 1,
			at: "period_end",
		});
		expect(first.status, JSON.stringify(first.body)).toBe(200);
		expect(first.body.pending_plan_change).toEqual({
			rate_plan_id: other.id,
			version: 1,
			at: nextPeriodStart(),
		});
		expect(first.body.pending_rate_plan_id).toBe(other.id);
		const second = await post(`/v1/subscriptions/${subscription.id}/change-plan`, { rate_plan_id: other.id });
		expect(second.body.pending_plan_change).toEqual({
			rate_plan_id: other.id,
			version: 2,
			at: nextPeriodStart(),
		});
		expect(await history(subscription.id)).toHaveLength(2);
		// Back to the plan and version it has: the pending change is withdrawn.
		const back = await post(`/v1/subscriptions/${subscription.id}/change-plan`, { rate_plan_id: plan.id });
		expect(back.status).toBe(200);
		expect(back.body.pending_plan_change).toBeNull();
		expect(back.body.pending_rate_plan_id).toBeNull();
		expect(await history(subscription.id)).toHaveLength(1);
	});

	it("answers every error of the contract and stores nothing", async () => {
		const plan = await newPlan();
		const euro = await newPlan({ currency: "EUR" });
		const subscription = await subscribeTo(plan.id);
		const url = `/v1/subscriptions/${subscription.id}/change-plan`;
		expectError(await post(url, { rate_plan_id: "plan_00000000000000000000000000" }), 404, "not_found");
		expectError(await post(url, { version: 9 }), 404, "not_found");
		expect(expectError(await post(url, { rate_plan_id: euro.id }), 409, "conflict").message).toContain("EUR");
		expect(expectError(await post(url, {}), 409, "conflict").message).toContain("already");
		expectError(await post(url, { version: 1 }), 409, "conflict");
		expectError(await post(url, { at: "tomorrow" }), 400, "validation_error");
		expectError(await post(url, { version: 0 }), 400, "validation_error");
		expectError(await post(url, { plan: plan.id }), 400, "validation_error");
		expectError(
			await post("/v1/subscriptions/sub_00000000000000000000000000/change-plan", {}),
			404,
			"not_found",
		);
		expect(await history(subscription.id)).toHaveLength(1);
		expect(await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id)).toEqual(
			[],
		);
		await newVersion(plan.id);
		await post(`/v1/subscriptions/${subscription.id}/cancel`, {});
		expectError(await post(url, {}), 409, "conflict");
		const readOnly = await createKey("read-only");
		expectError(await post(url, {}, { key: readOnly }), 403, "forbidden");
	});

	it("the new version bills from the period it starts in; the counts of the plan view follow", async () => {
		const plan = await newPlan();
		const subscription = await subscribeTo(plan.id);
		await newVersion(plan.id, { base_fee: 50 });
		await post(`/v1/subscriptions/${subscription.id}/change-plan`, {});
		// Time passes: the history rows move one month back, so the pending row's period is the current one.
		for (const [version, period] of [
			[1, addPeriods(currentPeriod(), -1)],
			[2, currentPeriod()],
		] as const) {
			await env.DB.prepare(
				"UPDATE subscription_plans SET effective_period = ? WHERE subscription_id = ? AND rate_plan_version = ?",
			)
				.bind(period, subscription.id, version)
				.run();
		}
		const read = (await get(`/v1/subscriptions/${subscription.id}`)).body;
		expect(read).toMatchObject({ rate_plan_id: plan.id, rate_plan_version: 2, pending_plan_change: null });
		const row = await env.DB.prepare("SELECT rate_plan_version FROM subscriptions WHERE id = ?")
			.bind(subscription.id)
			.first();
		expect(row).toEqual({ rate_plan_version: 2 });
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.body.amount).toBe(50);
		const counts = (await get(`/v1/pricing/rate-plans/${plan.id}`)).body.versions.map(
			(v: { subscriptions: number }) => v.subscriptions,
		);
		expect(counts).toEqual([0, 1]);
	});

	it("PATCH {rate_plan_id} of its own plan moves it to the latest version at period end", async () => {
		const plan = await newPlan();
		const subscription = await subscribeTo(plan.id);
		await newVersion(plan.id, { base_fee: 50 });
		const response = await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: plan.id });
		expect(response.status).toBe(200);
		expect(response.body.pending_plan_change).toEqual({
			rate_plan_id: plan.id,
			version: 2,
			at: nextPeriodStart(),
		});
		expect(response.body.pending_rate_plan_id).toBe(plan.id);
		expect(response.body.rate_plan_version).toBe(1);
	});
});

describe("POST /v1/pricing/rate-plans/{id}/migrate", () => {
	it("moves the subscriptions of earlier versions; a second run migrates 0", async () => {
		const plan = await newPlan();
		const a = await subscribeTo(plan.id);
		const b = await subscribeTo(plan.id);
		const other = await newPlan({ name: "Other" });
		const leaving = await subscribeTo(plan.id);
		await post(`/v1/subscriptions/${leaving.id}/change-plan`, { rate_plan_id: other.id });
		await newVersion(plan.id, { base_fee: 30 });
		const onLatest = await subscribeTo(plan.id);
		const first = await post(`/v1/pricing/rate-plans/${plan.id}/migrate`, {});
		expect(first.status, JSON.stringify(first.body)).toBe(200);
		expect(first.body).toEqual({ migrated: 2, subscription_ids: [a.id, b.id] });
		for (const id of [a.id, b.id]) {
			const read = (await get(`/v1/subscriptions/${id}`)).body;
			expect(read.rate_plan_version).toBe(1);
			expect(read.pending_plan_change).toEqual({ rate_plan_id: plan.id, version: 2, at: nextPeriodStart() });
		}
		expect((await get(`/v1/subscriptions/${leaving.id}`)).body.pending_rate_plan_id).toBe(other.id);
		expect((await get(`/v1/subscriptions/${onLatest.id}`)).body.pending_plan_change).toBeNull();
		const second = await post(`/v1/pricing/rate-plans/${plan.id}/migrate`);
		expect(second.status).toBe(200);
		expect(second.body).toEqual({ migrated: 0, subscription_ids: [] });
	});

	it("takes from_version and to_version; unknown ones and unknown plans are 404", async () => {
		const plan = await newPlan();
		const v1 = await subscribeTo(plan.id);
		await newVersion(plan.id);
		const v2 = await subscribeTo(plan.id);
		await newVersion(plan.id);
		const moved = await post(`/v1/pricing/rate-plans/${plan.id}/migrate`, { from_version: 2, to_version: 3 });
		expect(moved.body).toEqual({ migrated: 1, subscription_ids: [v2.id] });
		expect((await get(`/v1/subscriptions/${v1.id}`)).body.pending_plan_change).toBeNull();
		const url = `/v1/pricing/rate-plans/${plan.id}/migrate`;
		expectError(await post(url, { from_version: 7 }), 404, "not_found");
		expectError(await post(url, { to_version: 7 }), 404, "not_found");
		expectError(await post(url, { at: "now" }), 400, "validation_error");
		expectError(
			await post("/v1/pricing/rate-plans/plan_00000000000000000000000000/migrate", {}),
			404,
			"not_found",
		);
		expect((await get(`/v1/subscriptions/${v1.id}`)).body.pending_plan_change).toBeNull();
	});
});
