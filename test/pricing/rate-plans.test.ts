import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createKey, del, expectError, get, post } from "../helpers";

type Body = Record<string, unknown>;

const tokens = { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" };
const perUnitTokens: Body = { metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 };
const tieredCalls: Body = {
	metric: "api_calls",
	description: "Tool calls",
	source: { kind: "action", type: "tool.call", aggregate: "count" },
	model: "tiered",
	included_quantity: 100,
	tiers: [
		{ up_to: 1000, unit_price: 0.01, flat_fee: 1.5 },
		{ up_to: null, unit_price: 0.005 },
	],
};
const dealShare: Body = {
	metric: "deal_value",
	source: { kind: "outcome", type: "deal.closed", aggregate: "sum" },
	model: "percentage",
	percent: 12.5,
};

const planBody = (fields: Body = {}): Body => ({
	name: "Agent Pro",
	description: "For sales agents",
	currency: "EUR",
	base_fee: 49.99,
	charges: [perUnitTokens, tieredCalls, dealShare],
	...fields,
});

async function createPlan(fields: Body = {}, key?: string) {
	const response = await post("/v1/pricing/rate-plans", planBody(fields), { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; status: string };
}

describe("POST /v1/pricing/rate-plans", () => {
	it("creates an active plan and returns it as sent", async () => {
		const response = await post("/v1/pricing/rate-plans", planBody());
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^plan_[0-9a-z]{26}$/),
			name: "Agent Pro",
			description: "For sales agents",
			currency: "EUR",
			base_fee: 49.99,
			minimum_amount: 0,
			prorate: false,
			charges: [perUnitTokens, tieredCalls, dealShare],
			status: "active",
			version: 1,
			versions: [{ version: 1, created_at: response.body.created_at, subscriptions: 0 }],
			created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
		});
	});

	it("stores the base fee as an exact decimal and the charges as sent", async () => {
		const plan = await createPlan({
			base_fee: 0.1,
			charges: [{ ...perUnitTokens, unit_price: 0.000000000001 }],
		});
		const row = await env.DB.prepare(
			"SELECT environment, base_fee, charges, status FROM rate_plans WHERE id = ?",
		)
			.bind(plan.id)
			.first<{ environment: string; base_fee: string; charges: string; status: string }>();
		expect(row).toMatchObject({ environment: "live", base_fee: "0.1", status: "active" });
		expect(JSON.parse(row?.charges ?? "null")).toEqual([{ ...perUnitTokens, unit_price: 1e-12 }]);
	});

	it("fills in the defaults: USD, no base fee, no description", async () => {
		const response = await post("/v1/pricing/rate-plans", { name: "Free", charges: [] });
		expect(response.status).toBe(201);
		expect(response.body).toMatchObject({
			name: "Free",
			description: null,
			currency: "USD",
			base_fee: 0,
			prorate: false,
			charges: [],
		});
	});

	const twoTiers = (first: number | null, second: number | null) => [
		{ up_to: first, unit_price: 0.01 },
		{ up_to: second, unit_price: 0.005 },
	];
	it.each<[string, Body, string]>([
		["an unknown field", planBody({ status: "archived" }), "status"],
		[
			"an unknown field in a charge",
			planBody({ charges: [{ ...perUnitTokens, tier: 1 }] }),
			"charges[0].tier",
		],
		["a lower-case currency", planBody({ currency: "usd" }), "currency"],
		["an unknown currency", planBody({ currency: "XYZ" }), "currency"],
		[
			"a duplicate metric",
			planBody({ charges: [perUnitTokens, { ...dealShare, metric: "tokens" }] }),
			"charges[1].metric",
		],
		[
			"the metric name __proto__",
			planBody({ charges: [{ ...perUnitTokens, metric: "__proto__" }] }),
			"charges[0].metric",
		],
		[
			"a metric with capitals",
			planBody({ charges: [{ ...perUnitTokens, metric: "Tokens" }] }),
			"charges[0].metric",
		],
		[
			"tiers not increasing",
			planBody({
				charges: [{ ...tieredCalls, tiers: [{ up_to: 1000, unit_price: 1 }, ...twoTiers(1000, null)] }],
			}),
			"charges[0].tiers[1].up_to",
		],
		[
			"a last tier with a bound",
			planBody({ charges: [{ ...tieredCalls, tiers: twoTiers(1000, 5000) }] }),
			"charges[0].tiers[1].up_to",
		],
		[
			"a sum of actions without a field",
			planBody({ charges: [{ ...perUnitTokens, source: { ...tokens, field: undefined } }] }),
			"charges[0].source.field",
		],
		[
			"a percentage of a count",
			planBody({
				charges: [{ ...dealShare, source: { kind: "outcome", type: "deal.closed", aggregate: "count" } }],
			}),
			"charges[0].model",
		],
		[
			"a unit price with 13 decimals",
			planBody({ charges: [{ ...perUnitTokens, unit_price: 0.0000000000001 }] }),
			"charges[0].unit_price",
		],
		["a base fee with 13 decimals", planBody({ base_fee: 1.0000000000001 }), "base_fee"],
		["a negative base fee", planBody({ base_fee: -1 }), "base_fee"],
		["an unknown model", planBody({ charges: [{ ...perUnitTokens, model: "flat" }] }), "charges[0].model"],
		["a missing name", planBody({ name: undefined }), "name"],
	])("refuses %s with 400 at its path", async (_, body, path) => {
		const error = expectError(await post("/v1/pricing/rate-plans", body), 400, "validation_error");
		expect(error.details?.map((detail) => detail.path)).toContain(path);
	});

	it("stores nothing when it refuses a plan", async () => {
		const before = (await get("/v1/pricing/rate-plans")).body.total;
		expectError(await post("/v1/pricing/rate-plans", planBody({ currency: "usd" })), 400, "validation_error");
		expect((await get("/v1/pricing/rate-plans")).body.total).toBe(before);
	});
});

describe("GET and DELETE /v1/pricing/rate-plans", () => {
	it("gets a plan by id, exactly as created", async () => {
		const created = await createPlan();
		const response = await get(`/v1/pricing/rate-plans/${created.id}`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual(created);
	});

	it("answers 404 for an unknown plan", async () => {
		const error = expectError(await get("/v1/pricing/rate-plans/plan_missing"), 404, "not_found");
		expect(error.message).toContain("plan_missing");
		expectError(await del("/v1/pricing/rate-plans/plan_missing"), 404, "not_found");
	});

	it("lists plans newest first, paginated", async () => {
		const first = await createPlan({ name: "First" });
		const second = await createPlan({ name: "Second" });
		const third = await createPlan({ name: "Third" });
		const page = await get("/v1/pricing/rate-plans?limit=2");
		expect(page.status).toBe(200);
		expect(page.body.rate_plans.map((p: { id: string }) => p.id)).toEqual([third.id, second.id]);
		expect(page.body).toMatchObject({ limit: 2, offset: 0, total: expect.any(Number) });
		expect(page.body.total).toBeGreaterThanOrEqual(3);
		const next = await get("/v1/pricing/rate-plans?limit=1&offset=2");
		expect(next.body.rate_plans).toEqual([first]);
	});

	it("refuses a bad page query", async () => {
		const error = expectError(await get("/v1/pricing/rate-plans?limit=101"), 400, "validation_error");
		expect(error.details?.[0]?.path).toBe("limit");
	});

	it("archives a plan, which stays readable and listed; archiving again changes nothing", async () => {
		const created = await createPlan();
		const archived = await del(`/v1/pricing/rate-plans/${created.id}`);
		expect(archived.status).toBe(200);
		expect(archived.body).toEqual({ ...created, status: "archived" });
		expect((await get(`/v1/pricing/rate-plans/${created.id}`)).body.status).toBe("archived");
		const listed = (await get("/v1/pricing/rate-plans?limit=100")).body.rate_plans.find(
			(p: { id: string }) => p.id === created.id,
		);
		expect(listed).toEqual(archived.body);
		const again = await del(`/v1/pricing/rate-plans/${created.id}`);
		expect(again.status).toBe(200);
		expect(again.body).toEqual(archived.body);
	});
});

describe("rate plans across environments and permissions", () => {
	let testWriter: string;
	let liveReader: string;
	let sdkKey: string;
	beforeAll(async () => {
		[testWriter, liveReader, sdkKey] = await Promise.all([
			createKey("read-write", "test"),
			createKey("read-only", "live"),
			createKey("sdk", "live"),
		]);
	});

	it("keeps a test-environment plan invisible to live keys", async () => {
		const plan = await createPlan({}, testWriter);
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`, { key: testWriter })).status).toBe(200);
		expectError(await get(`/v1/pricing/rate-plans/${plan.id}`), 404, "not_found");
		expectError(await del(`/v1/pricing/rate-plans/${plan.id}`), 404, "not_found");
		const simulated = await post("/v1/pricing/simulate", { rate_plan_id: plan.id, usage: {} });
		expectError(simulated, 404, "not_found");
		const live = await get("/v1/pricing/rate-plans?limit=100");
		expect(live.body.rate_plans.map((p: { id: string }) => p.id)).not.toContain(plan.id);
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`, { key: testWriter })).body.status).toBe("active");
	});

	it("refuses SDK keys on every pricing route", async () => {
		const plan = await createPlan();
		const calls = [
			post("/v1/pricing/rate-plans", planBody(), { key: sdkKey }),
			get("/v1/pricing/rate-plans", { key: sdkKey }),
			get(`/v1/pricing/rate-plans/${plan.id}`, { key: sdkKey }),
			del(`/v1/pricing/rate-plans/${plan.id}`, { key: sdkKey }),
			post("/v1/pricing/simulate", { rate_plan_id: plan.id, usage: {} }, { key: sdkKey }),
		];
		for (const response of await Promise.all(calls)) expectError(response, 403, "forbidden");
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`)).body.status).toBe("active");
	});

	it("lets a read-only key read and simulate, but not create or archive", async () => {
		const plan = await createPlan();
		const before = (await get("/v1/pricing/rate-plans")).body.total;
		expectError(await post("/v1/pricing/rate-plans", planBody(), { key: liveReader }), 403, "forbidden");
		expectError(await del(`/v1/pricing/rate-plans/${plan.id}`, { key: liveReader }), 403, "forbidden");
		expect((await get("/v1/pricing/rate-plans", { key: liveReader })).status).toBe(200);
		expect((await get(`/v1/pricing/rate-plans/${plan.id}`, { key: liveReader })).body).toEqual(plan);
		const simulated = await post(
			"/v1/pricing/simulate",
			{ rate_plan_id: plan.id, usage: {} },
			{ key: liveReader },
		);
		expect(simulated.status).toBe(200);
		expect((await get("/v1/pricing/rate-plans")).body.total).toBe(before);
	});
});
