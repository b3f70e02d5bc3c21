/**
 * Black-box checks of plan versions, grandfathering, change-plan at period end and migrate, written from the
 * contract's text of plan versions and plan changes: shapes, statuses, errors with nothing stored, webhooks.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generateOne,
	instanceKey,
	linesOf,
	sendActions,
	subscribe,
} from "../invoicing/fixtures";
import { clockAt, newVersion, nextMonthStart, outbox, perCall, subscription } from "./plan-billing-fixtures";

afterEach(() => {
	vi.useRealTimers();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const nextPeriodStart = () => nextMonthStart(new Date().toISOString());

async function planView(id: string, query = "") {
	const response = await get(`/v1/pricing/rate-plans/${id}${query}`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

const versionRow = (view: any, version: number) =>
	(view.versions as { version: number; created_at: string; subscriptions: number }[]).find(
		(row) => row.version === version,
	);

async function subscribed(planId: string) {
	const account = await createAccount();
	const keys = [instanceKey()];
	const sub = await subscribe(account.id, planId, keys);
	return { account, keys, sub: sub as any };
}

describe("plan versions", () => {
	it("start at 1; a version keeps the id, adds 1, and earlier versions stay readable", async () => {
		const plan = (await createPlan({ base_fee: 20, charges: [perCall(1)] })) as any;
		expect(plan.version).toBe(1);
		const first = await planView(plan.id);
		expect(first.version).toBe(1);
		expect(first.versions).toHaveLength(1);
		expect(versionRow(first, 1)).toEqual({
			version: 1,
			created_at: expect.stringMatching(ISO),
			subscriptions: 0,
		});

		const v2 = await newVersion(plan.id, { base_fee: 50, charges: [perCall(2)] });
		expect(v2).toMatchObject({ id: plan.id, version: 2, base_fee: 50, currency: "USD" });
		expect(v2.charges[0]).toMatchObject({ metric: "calls", unit_price: 2 });

		const latest = await planView(plan.id);
		expect(latest).toMatchObject({ id: plan.id, version: 2, base_fee: 50 });
		expect(latest.versions.map((row: { version: number }) => row.version).sort()).toEqual([1, 2]);
		const old = await planView(plan.id, "?version=1");
		expect(old).toMatchObject({ id: plan.id, version: 1, base_fee: 20 });
		expect(old.charges[0]).toMatchObject({ unit_price: 1 });
		expect((await planView(plan.id, "?version=2")).base_fee).toBe(50);
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=3`), 404, "not_found");
		for (const bad of ["abc", "1e0", "-1", "1.5"]) {
			expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=${bad}`), 400, "validation_error");
		}
	});

	it("count the active subscriptions on each version; new subscriptions take the latest", async () => {
		const plan = await createPlan({ base_fee: 1, charges: [] });
		const a = await subscribed(plan.id);
		await subscribed(plan.id);
		const gone = await subscribed(plan.id);
		expect(a.sub).toMatchObject({ rate_plan_version: 1, pending_plan_change: null });
		expect((await post(`/v1/subscriptions/${gone.sub.id}/cancel`, {})).status).toBe(200);
		await newVersion(plan.id, { base_fee: 2, charges: [] });
		const late = await subscribed(plan.id);
		expect(late.sub).toMatchObject({ rate_plan_id: plan.id, rate_plan_version: 2 });
		const view = await planView(plan.id);
		expect(versionRow(view, 1)?.subscriptions).toBe(2);
		expect(versionRow(view, 2)?.subscriptions).toBe(1);
		expect((await subscription(a.sub.id)).rate_plan_version).toBe(1);
	});

	it("refuse another currency with 409, bad bodies with 400, unknown plans with 404: nothing stored", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [perCall(1)] });
		const before = await planView(plan.id);
		const url = `/v1/pricing/rate-plans/${plan.id}/versions`;
		expectError(
			await post(url, { name: "Plan", currency: "EUR", base_fee: 20, charges: [] }),
			409,
			"conflict",
		);
		for (const body of [
			{ name: "Plan", base_fee: -1, charges: [] },
			{ name: "Plan", base_fee: 1, charges: [], version: 7 },
			{ name: "Plan", base_fee: 1, charges: [], id: "plan_x" },
			{ name: "Plan", base_fee: 1, charges: [perCall(1), perCall(2)] },
			{ base_fee: 1e16, charges: [] },
		]) {
			expectError(await post(url, body), 400, "validation_error");
		}
		expectError(
			await post("/v1/pricing/rate-plans/plan_unknown/versions", { name: "P", charges: [] }),
			404,
			"not_found",
		);
		expect(await planView(plan.id)).toEqual(before);
	});

	it("are writes for read-write keys only, and stay in their environment", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const url = `/v1/pricing/rate-plans/${plan.id}/versions`;
		const readOnly = await createKey("read-only");
		expectError(
			await post(url, { name: "P", base_fee: 5, charges: [] }, { key: readOnly }),
			403,
			"forbidden",
		);
		const sdk = await createKey("sdk");
		expectError(await post(url, { name: "P", base_fee: 5, charges: [] }, { key: sdk }), 403, "forbidden");
		const other = await createKey("admin", "test");
		expectError(await post(url, { name: "P", base_fee: 5, charges: [] }, { key: other }), 404, "not_found");
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=1`, { key: other }), 404, "not_found");
		const readWrite = await createKey("read-write");
		const made = await post(url, { name: "P", base_fee: 5, charges: [] }, { key: readWrite });
		expect(made.status, JSON.stringify(made.body)).toBe(201);
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`, { key: readOnly })).body.version).toBe(2);
	});

	it("answer a replayed Idempotency-Key with the first version, making one", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const url = `/v1/pricing/rate-plans/${plan.id}/versions`;
		const headers = { "Idempotency-Key": `ver-${crypto.randomUUID()}` };
		const first = await post(url, { name: "P", base_fee: 30, charges: [] }, { headers });
		expect(first.status).toBe(201);
		const again = await post(url, { name: "P", base_fee: 30, charges: [] }, { headers });
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expectError(
			await post(url, { name: "P", base_fee: 31, charges: [] }, { headers }),
			409,
			"idempotency_key_reused",
		);
		expect((await planView(plan.id)).version).toBe(2);
	});
});

describe("grandfathered subscriptions", () => {
	it("keep their version's prices in usage, upcoming invoices, simulate and invoices", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [perCall(1)] });
		const { account, keys, sub } = await subscribed(plan.id);
		await newVersion(plan.id, { base_fee: 50, charges: [perCall(3)] });
		await sendActions(actions(keys[0] as string, "call", 4));

		const usage = await get(`/v1/usage?subscription_id=${sub.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(usage.body.total).toBe(24);
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(upcoming.body.amount).toBe(24);
		const simulated = await post("/v1/pricing/simulate", { subscription_id: sub.id, usage: { calls: 10 } });
		expect(simulated.status, JSON.stringify(simulated.body)).toBe(200);
		expect(simulated.body.total).toBe(30);
		const byPlan = await post("/v1/pricing/simulate", { rate_plan_id: plan.id, usage: { calls: 10 } });
		expect(byPlan.body.total).toBe(80);

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(24);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 20],
			["calls", 4, 4],
		]);
	});
});

describe("POST /v1/subscriptions/{id}/change-plan at period_end", () => {
	it("pends the change until the next period, mirrors it, announces it, and bills this period by the old one", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [perCall(1)] });
		const { account, keys, sub } = await subscribed(plan.id);
		await newVersion(plan.id, { base_fee: 50, charges: [perCall(3)] });
		const changed = await post(`/v1/subscriptions/${sub.id}/change-plan`, {});
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body).toMatchObject({
			id: sub.id,
			rate_plan_id: plan.id,
			rate_plan_version: 1,
			pending_rate_plan_id: plan.id,
			pending_plan_change: { rate_plan_id: plan.id, version: 2, at: nextPeriodStart() },
		});
		expect(await subscription(sub.id)).toEqual(changed.body);
		// A replayed Idempotency-Key answers the same and changes nothing more.
		const headers = { "Idempotency-Key": `chg-${crypto.randomUUID()}` };
		const other = await createPlan({ base_fee: 1, charges: [] });
		const first = await post(
			`/v1/subscriptions/${sub.id}/change-plan`,
			{ rate_plan_id: other.id },
			{ headers },
		);
		const again = await post(
			`/v1/subscriptions/${sub.id}/change-plan`,
			{ rate_plan_id: other.id },
			{ headers },
		);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expect((await post(`/v1/subscriptions/${sub.id}/change-plan`, {})).status).toBe(200);
		const events = await outbox("subscription.updated", (d) => d.subscription_id === sub.id);
		expect(events).toHaveLength(3);
		expect(events[0]?.data).toMatchObject({ rate_plan_id: plan.id, pending_rate_plan_id: plan.id });
		expect(events[1]?.data).toMatchObject({ rate_plan_id: plan.id, pending_rate_plan_id: other.id });

		await sendActions(actions(keys[0] as string, "call", 2));
		expect((await generateOne(currentPeriod(), account.id)).amount).toBe(22);
	});

	it("takes effect at the next period's first instant: the next period is billed by the new version", async () => {
		clockAt("2026-04-10T12:00:00.000Z");
		const plan = await createPlan({ base_fee: 20, charges: [perCall(1)] });
		const other = await createPlan({ base_fee: 7, charges: [perCall(5)] });
		const { account, keys, sub } = await subscribed(plan.id);
		const changed = await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: other.id });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body.pending_plan_change).toEqual({
			rate_plan_id: other.id,
			version: 1,
			at: "2026-05-01T00:00:00.000Z",
		});
		await sendActions(actions(keys[0] as string, "call", 1));
		clockAt("2026-05-03T00:00:00.000Z");
		expect(await subscription(sub.id)).toMatchObject({
			rate_plan_id: other.id,
			rate_plan_version: 1,
			pending_plan_change: null,
			pending_rate_plan_id: null,
		});
		const listed = await get(`/v1/subscriptions?account_id=${account.id}`);
		expect(listed.body.subscriptions).toEqual([await subscription(sub.id)]);
		expect(versionRow(await planView(other.id), 1)?.subscriptions).toBe(1);
		expect(versionRow(await planView(plan.id), 1)?.subscriptions).toBe(0);
		await sendActions(actions(keys[0] as string, "call", 2));
		expect((await generateOne("2026-04", account.id)).amount).toBe(21);
		const may = await generateOne("2026-05", account.id);
		expect(may).toMatchObject({ rate_plan_id: other.id, amount: 17 });
	});

	it("replaces an earlier pending change; PATCH {rate_plan_id} is a change to the latest version", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const b = await createPlan({ base_fee: 30, charges: [] });
		const c = await createPlan({ base_fee: 40, charges: [] });
		await newVersion(c.id, { base_fee: 45, charges: [] });
		const { sub } = await subscribed(plan.id);
		expect((await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: b.id })).status).toBe(200);
		const replaced = await post(`/v1/subscriptions/${sub.id}/change-plan`, {
			rate_plan_id: c.id,
			version: 1,
			at: "period_end",
		});
		expect(replaced.body.pending_plan_change).toEqual({
			rate_plan_id: c.id,
			version: 1,
			at: nextPeriodStart(),
		});
		expect(replaced.body.pending_rate_plan_id).toBe(c.id);

		const patched = await patch(`/v1/subscriptions/${sub.id}`, { rate_plan_id: c.id });
		expect(patched.status, JSON.stringify(patched.body)).toBe(200);
		expect(patched.body).toMatchObject({
			rate_plan_id: plan.id,
			rate_plan_version: 1,
			pending_rate_plan_id: c.id,
			pending_plan_change: { rate_plan_id: c.id, version: 2, at: nextPeriodStart() },
		});
		expect(await subscription(sub.id)).toEqual(patched.body);
		expect(await outbox("subscription.updated", (d) => d.subscription_id === sub.id)).toHaveLength(3);
	});

	it("refuses bad changes with nothing changed", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const euro = await createPlan({ base_fee: 20, currency: "EUR", charges: [] });
		const { sub } = await subscribed(plan.id);
		const url = `/v1/subscriptions/${sub.id}/change-plan`;
		const before = await subscription(sub.id);
		expectError(await post(url, { rate_plan_id: "plan_unknown" }), 404, "not_found");
		expectError(await post(url, { version: 2 }), 404, "not_found");
		expectError(await post(url, { rate_plan_id: euro.id }), 409, "conflict");
		expectError(await patch(`/v1/subscriptions/${sub.id}`, { rate_plan_id: euro.id }), 409, "conflict");
		expectError(await post(url, {}), 409, "conflict");
		expectError(await post(url, { rate_plan_id: plan.id, version: 1 }), 409, "conflict");
		for (const body of [
			{ at: "tomorrow" },
			{ at: "2026-12-01T00:00:00Z" },
			{ version: 0 },
			{ version: 1.5 },
			{ version: "2" },
			{ rate_plan_id: 5 },
			{ rate_plan_id: plan.id, status: "cancelled" },
		]) {
			expectError(await post(url, body), 400, "validation_error");
		}
		expectError(await post("/v1/subscriptions/sub_unknown/change-plan", {}), 404, "not_found");
		const readOnly = await createKey("read-only");
		expectError(await post(url, {}, { key: readOnly }), 403, "forbidden");
		expect(await subscription(sub.id)).toEqual(before);
		expect(await outbox("subscription.updated", (d) => d.subscription_id === sub.id)).toHaveLength(0);

		const target = await createPlan({ base_fee: 1, charges: [] });
		expect((await post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
		expectError(await post(url, { rate_plan_id: target.id }), 409, "conflict");
		expect((await subscription(sub.id)).pending_plan_change).toBeNull();
	});
});

describe("POST /v1/pricing/rate-plans/{id}/migrate", () => {
	it("moves every active earlier-version subscription at period end, and a second run migrates 0", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const elsewhere = await createPlan({ base_fee: 9, charges: [] });
		const one = await subscribed(plan.id);
		const two = await subscribed(plan.id);
		const leaving = await subscribed(plan.id);
		const cancelled = await subscribed(plan.id);
		expect(
			(await post(`/v1/subscriptions/${leaving.sub.id}/change-plan`, { rate_plan_id: elsewhere.id })).status,
		).toBe(200);
		expect((await post(`/v1/subscriptions/${cancelled.sub.id}/cancel`, {})).status).toBe(200);
		await newVersion(plan.id, { base_fee: 25, charges: [] });
		const fresh = await subscribed(plan.id);

		const url = `/v1/pricing/rate-plans/${plan.id}/migrate`;
		const first = await post(url, {});
		expect(first.status, JSON.stringify(first.body)).toBe(200);
		expect(first.body.migrated).toBe(2);
		expect([...first.body.subscription_ids].sort()).toEqual([one.sub.id, two.sub.id].sort());
		for (const { sub } of [one, two]) {
			expect(await subscription(sub.id)).toMatchObject({
				rate_plan_version: 1,
				pending_rate_plan_id: plan.id,
				pending_plan_change: { rate_plan_id: plan.id, version: 2, at: nextPeriodStart() },
			});
			expect(await outbox("subscription.updated", (d) => d.subscription_id === sub.id)).toHaveLength(1);
		}
		expect((await subscription(leaving.sub.id)).pending_plan_change?.rate_plan_id).toBe(elsewhere.id);
		expect((await subscription(fresh.sub.id)).pending_plan_change).toBeNull();
		expect((await subscription(cancelled.sub.id)).pending_plan_change).toBeNull();

		const second = await post(url, {});
		expect(second.status).toBe(200);
		expect(second.body).toEqual({ migrated: 0, subscription_ids: [] });
		// §37: an all-optional body may be empty.
		const empty = await post(url);
		expect(empty.status, JSON.stringify(empty.body)).toBe(200);
		expect(empty.body.migrated).toBe(0);
	});

	it("takes from_version and to_version, replacing a pending change to another version of the plan", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const one = await subscribed(plan.id);
		await newVersion(plan.id, { base_fee: 25, charges: [] });
		const onTwo = await subscribed(plan.id);
		expect((await post(`/v1/subscriptions/${one.sub.id}/change-plan`, { version: 2 })).status).toBe(200);
		await newVersion(plan.id, { base_fee: 30, charges: [] });
		const url = `/v1/pricing/rate-plans/${plan.id}/migrate`;

		const toTwo = await post(url, { from_version: 1, to_version: 2 });
		expect(toTwo.body).toEqual({ migrated: 0, subscription_ids: [] });
		const fromOne = await post(url, { from_version: 1 });
		expect(fromOne.body).toEqual({ migrated: 1, subscription_ids: [one.sub.id] });
		expect((await subscription(one.sub.id)).pending_plan_change).toMatchObject({
			rate_plan_id: plan.id,
			version: 3,
		});
		expect((await subscription(onTwo.sub.id)).pending_plan_change).toBeNull();
		const rest = await post(url, { at: "period_end" });
		expect(rest.body).toEqual({ migrated: 1, subscription_ids: [onTwo.sub.id] });
		expect((await post(url, {})).body.migrated).toBe(0);
	});

	it("answers 404 for unknown plans and versions, 400 for bad bodies, 403 for read-only keys", async () => {
		const plan = await createPlan({ base_fee: 20, charges: [] });
		const { sub } = await subscribed(plan.id);
		await newVersion(plan.id, { base_fee: 25, charges: [] });
		const url = `/v1/pricing/rate-plans/${plan.id}/migrate`;
		expectError(await post("/v1/pricing/rate-plans/plan_unknown/migrate", {}), 404, "not_found");
		expectError(await post(url, { from_version: 9 }), 404, "not_found");
		expectError(await post(url, { to_version: 9 }), 404, "not_found");
		// The only instant a migration takes is the period's end.
		for (const body of [{ from_version: "1" }, { to_version: 0 }, { at: "now" }, { dry_run: true }]) {
			expectError(await post(url, body), 400, "validation_error");
		}
		const readOnly = await createKey("read-only");
		expectError(await post(url, {}, { key: readOnly }), 403, "forbidden");
		expect((await subscription(sub.id)).pending_plan_change).toBeNull();
	});
});
