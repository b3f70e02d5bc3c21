/**
 * Plan versions (docs/plan-versions.md): POST …/versions, reads by version, and subscriptions pinned to their
 * version — usage, simulate, upcoming and issued invoices — while new subscriptions take the latest.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, post } from "../helpers";
import { actions, currentPeriod, generateOne, linesOf, sdkKey, sendActions } from "../invoicing/fixtures";
import { standardCharges, uniqueKey } from "../subscriptions/fixtures";

const planBody = (fields: Record<string, unknown> = {}) => ({
	name: "Growth",
	currency: "USD",
	base_fee: 20,
	charges: standardCharges,
	...fields,
});

async function newPlan(fields: Record<string, unknown> = {}) {
	const response = await post("/v1/pricing/rate-plans", planBody(fields));
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

async function newVersion(id: string, fields: Record<string, unknown> = {}) {
	const response = await post(`/v1/pricing/rate-plans/${id}/versions`, planBody(fields));
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

async function subscribeTo(planId: string, accountId?: string) {
	const account = accountId ?? (await createAccount()).id;
	const keys = [uniqueKey()];
	const response = await post("/v1/subscriptions", {
		account_id: account,
		rate_plan_id: planId,
		agent_instance_ids: keys,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { subscription: response.body, keys, accountId: account };
}

const storedVersions = async (id: string) =>
	(
		await env.DB.prepare(
			"SELECT version, base_fee FROM rate_plan_versions WHERE rate_plan_id = ? ORDER BY version",
		)
			.bind(id)
			.all<{ version: number; base_fee: string }>()
	).results;

describe("POST /v1/pricing/rate-plans/{id}/versions", () => {
	it("a plan is created at version 1 with one version listed", async () => {
		const plan = await newPlan();
		expect(plan.version).toBe(1);
		expect(plan.versions).toEqual([{ version: 1, created_at: plan.created_at, subscriptions: 0 }]);
		expect(await storedVersions(plan.id)).toEqual([{ version: 1, base_fee: "20" }]);
	});

	it("makes version 2 with the same id; GET shows the latest, ?version=1 the earlier one", async () => {
		const plan = await newPlan();
		const v2 = await newVersion(plan.id, { name: "Growth 2", base_fee: 50 });
		expect(v2).toMatchObject({ id: plan.id, version: 2, name: "Growth 2", base_fee: 50, currency: "USD" });
		expect(v2.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
		expect(v2.versions[1].created_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);

		const latest = await get(`/v1/pricing/rate-plans/${plan.id}`);
		expect(latest.status).toBe(200);
		expect(latest.body).toMatchObject({ version: 2, base_fee: 50, name: "Growth 2" });
		const first = await get(`/v1/pricing/rate-plans/${plan.id}?version=1`);
		expect(first.status).toBe(200);
		expect(first.body).toMatchObject({ id: plan.id, version: 1, base_fee: 20, name: "Growth" });
		expect(first.body.versions).toEqual(latest.body.versions);
		expect(await storedVersions(plan.id)).toEqual([
			{ version: 1, base_fee: "20" },
			{ version: 2, base_fee: "50" },
		]);
		const third = await newVersion(plan.id, { base_fee: 60 });
		expect(third.version).toBe(3);
	});

	it("an unknown version answers 404; a version that is not a whole number 400", async () => {
		const plan = await newPlan();
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=2`), 404, "not_found");
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=0`), 400, "validation_error");
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}?version=1.0`), 400, "validation_error");
	});

	it("refuses another currency (409), an unknown plan (404), a bad body (400): nothing stored", async () => {
		const plan = await newPlan();
		const euro = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, planBody({ currency: "EUR" }));
		expect(expectError(euro, 409, "conflict").message).toContain("USD");
		expectError(
			await post("/v1/pricing/rate-plans/plan_00000000000000000000000000/versions", planBody()),
			404,
			"not_found",
		);
		expectError(
			await post(`/v1/pricing/rate-plans/${plan.id}/versions`, planBody({ base_fee: -1 })),
			400,
			"validation_error",
		);
		expectError(
			await post(`/v1/pricing/rate-plans/${plan.id}/versions`, { ...planBody(), version: 7 }),
			400,
			"validation_error",
		);
		expect(await storedVersions(plan.id)).toEqual([{ version: 1, base_fee: "20" }]);
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`)).body.version).toBe(1);
	});

	it("needs a read-write key; a read-only key gets 403", async () => {
		const plan = await newPlan();
		const readOnly = await createKey("read-only");
		const response = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, planBody(), { key: readOnly });
		expectError(response, 403, "forbidden");
		const readWrite = await createKey("read-write");
		const ok = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, planBody(), { key: readWrite });
		expect(ok.status).toBe(201);
	});

	it("writes an audit record", async () => {
		const plan = await newPlan();
		await newVersion(plan.id, { base_fee: 30 });
		const row = await env.DB.prepare("SELECT action FROM audit_records WHERE resource_id = ? ORDER BY seq")
			.bind(plan.id)
			.all<{ action: string }>();
		expect(row.results.map((r) => r.action)).toEqual(["rate_plan.created", "rate_plan.version_created"]);
	});
});

describe("grandfathering", () => {
	it("an existing subscription keeps its version; a new one takes the latest", async () => {
		const plan = await newPlan();
		const old = await subscribeTo(plan.id);
		expect(old.subscription.rate_plan_version).toBe(1);
		expect(old.subscription.pending_plan_change).toBeNull();
		await newVersion(plan.id, { base_fee: 50, charges: [{ ...standardCharges[0], unit_price: 0.002 }] });
		const fresh = await subscribeTo(plan.id);
		expect(fresh.subscription.rate_plan_version).toBe(2);
		expect((await get(`/v1/subscriptions/${old.subscription.id}`)).body.rate_plan_version).toBe(1);

		const counts = (await get(`/v1/pricing/rate-plans/${plan.id}`)).body.versions.map(
			(v: { version: number; subscriptions: number }) => [v.version, v.subscriptions],
		);
		expect(counts).toEqual([
			[1, 1],
			[2, 1],
		]);

		await sendActions(actions(old.keys[0] as string, "llm_call", 2, { tokens: 1000 }));
		await sendActions(actions(fresh.keys[0] as string, "llm_call", 2, { tokens: 1000 }));
		const sdk = await sdkKey();
		// v1: base 20, 2000 tokens at 0.001 = 2; v2: base 50, 2000 tokens at 0.002 = 4 (calls and hires gone).
		const oldUsage = await get(`/v1/usage?subscription_id=${old.subscription.id}`, { key: sdk });
		expect(oldUsage.body.total, JSON.stringify(oldUsage.body)).toBe(22);
		const freshUsage = await get(`/v1/usage?subscription_id=${fresh.subscription.id}`, { key: sdk });
		expect(freshUsage.body.total, JSON.stringify(freshUsage.body)).toBe(54);

		const simulated = await post("/v1/pricing/simulate", {
			subscription_id: old.subscription.id,
			usage: { tokens: 2000 },
		});
		expect(simulated.body.total, JSON.stringify(simulated.body)).toBe(22);
		const latest = await post("/v1/pricing/simulate", { rate_plan_id: plan.id, usage: { tokens: 2000 } });
		expect(latest.body.total).toBe(54);

		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${old.subscription.id}`);
		expect(upcoming.body.amount, JSON.stringify(upcoming.body)).toBe(22);
		const invoice = await generateOne(currentPeriod(), old.accountId);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 20],
			["tokens", 2000, 2],
			["calls", 2, 0],
			["hires", 0, 0],
		]);
		const freshInvoice = await generateOne(currentPeriod(), fresh.accountId);
		expect(linesOf(freshInvoice)).toEqual([
			["base_fee", 1, 50],
			["tokens", 2000, 4],
		]);
	});
});
