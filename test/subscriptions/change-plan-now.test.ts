/**
 * POST /v1/subscriptions/{id}/change-plan with at "now" (docs/plan-versions.md#changing-now): the period splits at
 * the instant of the change, the subscription is on the new plan at once, a pending change is cleared; every
 * error stores nothing.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addPeriods } from "../../src/lib/time";
import { createAccount, createKey, expectError, get, post } from "../helpers";
import { currentPeriod } from "../invoicing/fixtures";
import { newPlan, newVersion, outboxEvents, uniqueKey } from "./fixtures";

async function subscribeTo(planId: string, account: { id: string } | null = null) {
	account ??= await createAccount();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: planId,
		agent_instance_ids: [uniqueKey()],
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

const rows = async (sql: string, id: string) => (await env.DB.prepare(sql).bind(id).all()).results;
const parts = (id: string) =>
	rows(
		"SELECT period, starts_at, ends_at, rate_plan_id, rate_plan_version FROM subscription_plan_parts WHERE subscription_id = ? ORDER BY starts_at",
		id,
	);
const history = (id: string) =>
	rows(
		"SELECT effective_period, rate_plan_id, rate_plan_version FROM subscription_plans WHERE subscription_id = ? ORDER BY effective_period",
		id,
	);

afterEach(() => {
	vi.useRealTimers();
});

describe("POST /v1/subscriptions/{id}/change-plan at now", () => {
	it("moves the subscription at once, splits the period and clears a pending change", async () => {
		const period = currentPeriod();
		const plan = await newPlan();
		const other = await newPlan({ name: "Scale", base_fee: 100 });
		const subscription = await subscribeTo(plan.id);
		await newVersion(plan.id, { base_fee: 50 });
		await post(`/v1/subscriptions/${subscription.id}/change-plan`, { rate_plan_id: other.id });
		const before = Date.now();
		const response = await post(`/v1/subscriptions/${subscription.id}/change-plan`, { at: "now" });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toEqual({
			...subscription,
			rate_plan_version: 2,
			pending_rate_plan_id: null,
			pending_plan_change: null,
		});
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body).toEqual(response.body);
		const [part] = (await parts(subscription.id)) as { ends_at: string }[];
		expect(part).toEqual({
			period,
			starts_at: `${period}-01T00:00:00.000Z`,
			ends_at: expect.any(String),
			rate_plan_id: plan.id,
			rate_plan_version: 1,
		});
		expect(Date.parse(part?.ends_at as string)).toBeGreaterThanOrEqual(before);
		// The period's row rates its last part and what follows; the pending change to Scale is gone.
		expect(await history(subscription.id)).toEqual([
			{ effective_period: period, rate_plan_id: plan.id, rate_plan_version: 2 },
		]);
		const events = await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => [e.data.rate_plan_version, e.data.pending_plan_change])).toEqual([
			[1, { rate_plan_id: other.id, version: 1, at: `${addPeriods(period, 1)}-01T00:00:00.000Z` }],
			[2, null],
		]);
		const audit = await rows(
			"SELECT changes FROM audit_records WHERE resource_id = ? AND action = 'subscription.updated' ORDER BY seq",
			subscription.id,
		);
		expect(JSON.parse((audit[1] as { changes: string }).changes)).toMatchObject({
			rate_plan_version: [1, 2],
			pending_plan_change: [{ rate_plan_id: other.id, version: 1 }, null],
		});
		// Another plan now, too: a second split, from the first one's instant.
		const again = await post(`/v1/subscriptions/${subscription.id}/change-plan`, {
			rate_plan_id: other.id,
			at: "now",
		});
		expect(again.status, JSON.stringify(again.body)).toBe(200);
		expect(again.body).toMatchObject({ rate_plan_id: other.id, rate_plan_version: 1 });
		const both = (await parts(subscription.id)) as { starts_at: string; ends_at: string }[];
		expect(both).toHaveLength(2);
		expect(both[1]).toMatchObject({
			starts_at: both[0]?.ends_at,
			rate_plan_id: plan.id,
			rate_plan_version: 2,
		});
	});

	it("answers every error of the contract and stores nothing", async () => {
		const plan = await newPlan();
		const euro = await newPlan({ currency: "EUR" });
		// Invoiced with grace days: the period's regular invoice is a draft first.
		const subscription = await subscribeTo(
			plan.id,
			await createAccount(undefined, { invoice_grace_days: 5 }),
		);
		const url = `/v1/subscriptions/${subscription.id}/change-plan`;
		const now = (body: Record<string, unknown>) => post(url, { ...body, at: "now" });
		expectError(await now({ rate_plan_id: "plan_00000000000000000000000000" }), 404, "not_found");
		expectError(await now({ version: 9 }), 404, "not_found");
		expect(expectError(await now({ rate_plan_id: euro.id }), 409, "conflict").message).toContain("EUR");
		expect(expectError(await now({}), 409, "conflict").message).toContain("already");
		expectError(await now({ version: 1 }), 409, "conflict");
		expectError(await now({ plan: plan.id }), 400, "validation_error");
		const readOnly = await createKey("read-only");
		expectError(await post(url, { at: "now" }, { key: readOnly }), 403, "forbidden");
		await newVersion(plan.id, { base_fee: 50 });
		// A regular invoice of the period, a draft too, forbids a split; a void one does not.
		const draft = await post("/v1/invoices/generate", {
			billing_period: currentPeriod(),
			account_id: subscription.account_id,
		});
		expect(draft.status, JSON.stringify(draft.body)).toBe(201);
		expect(draft.body.invoices[0].status).toBe("draft");
		expect(expectError(await now({}), 409, "conflict").message).toContain("regular invoice");
		expect(await parts(subscription.id)).toEqual([]);
		expect(await history(subscription.id)).toHaveLength(1);
		expect(await outboxEvents("subscription.updated", (d) => d.subscription_id === subscription.id)).toEqual(
			[],
		);
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.rate_plan_version).toBe(1);
		await post(`/v1/subscriptions/${subscription.id}/cancel`, {});
		expectError(await now({}), 409, "conflict");
	});
});
