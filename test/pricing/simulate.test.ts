import { describe, expect, it } from "vitest";
import { call, del, expectError, post } from "../helpers";

type Body = Record<string, unknown>;

const tokens = { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" };
const calls = { kind: "action", type: "tool.call", aggregate: "count" };
const dealValue = { kind: "outcome", type: "deal.closed", aggregate: "sum" };

async function createPlan(charges: Body[], fields: Body = {}) {
	const response = await post("/v1/pricing/rate-plans", { name: "Simulated", charges, ...fields });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body.id as string;
}

async function simulate(ratePlanId: string, usage: Record<string, unknown>) {
	const response = await post("/v1/pricing/simulate", { rate_plan_id: ratePlanId, usage });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as { rate_plan_id: string; currency: string; charges: Body[]; total: number };
}

const threeTiers = [
	{ up_to: 1000, unit_price: 0.01 },
	{ up_to: 10000, unit_price: 0.008 },
	{ up_to: null, unit_price: 0.005 },
];

describe("POST /v1/pricing/simulate: worked examples", () => {
	it("per_unit: 1,234,567 tokens × 0.000002 = 2.469134 → 2.47", async () => {
		const plan = await createPlan([
			{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 },
		]);
		expect(await simulate(plan, { tokens: 1234567 })).toEqual({
			rate_plan_id: plan,
			currency: "USD",
			charges: [
				{ metric: "tokens", model: "per_unit", quantity: 1234567, billable_quantity: 1234567, amount: 2.47 },
			],
			total: 2.47,
		});
	});

	it("graduated tiers: 12,345 units = 93.73, tier by tier", async () => {
		const plan = await createPlan([{ metric: "tokens", source: tokens, model: "tiered", tiers: threeTiers }]);
		const result = await simulate(plan, { tokens: 12345 });
		// 1000 × 0.01 = 10; 9000 × 0.008 = 72; 2345 × 0.005 = 11.725; 93.725 rounds half-up to 93.73.
		expect(result.charges).toEqual([
			{
				metric: "tokens",
				model: "tiered",
				quantity: 12345,
				billable_quantity: 12345,
				amount: 93.73,
				tiers: [
					{ up_to: 1000, quantity: 1000, amount: 10 },
					{ up_to: 10000, quantity: 9000, amount: 72 },
					{ up_to: null, quantity: 2345, amount: 11.725 },
				],
			},
		]);
		expect(result.total).toBe(93.73);
	});

	it("volume: a quantity on a tier's bound is priced by that tier", async () => {
		const tiers = [
			{ up_to: 1000, unit_price: 0.01 },
			{ up_to: null, unit_price: 0.008, flat_fee: 2 },
		];
		const plan = await createPlan([{ metric: "tokens", source: tokens, model: "volume", tiers }]);
		// 1000 is in the first tier: 1000 × 0.01 = 10.
		const atBound = await simulate(plan, { tokens: 1000 });
		expect(atBound.total).toBe(10);
		expect(atBound.charges[0]?.tiers).toEqual([
			{ up_to: 1000, quantity: 1000, amount: 10 },
			{ up_to: null, quantity: 0, amount: 0 },
		]);
		// 1001 moves every unit to the second tier: 1001 × 0.008 + 2 = 10.008 → 10.01.
		expect((await simulate(plan, { tokens: 1001 })).total).toBe(10.01);
	});

	it("package: started packages are paid in full, after the included quantity", async () => {
		const plan = await createPlan([
			{
				metric: "api_calls",
				source: calls,
				model: "package",
				included_quantity: 50,
				package_size: 100,
				package_price: 5,
			},
		]);
		// 250 − 50 free = 200 billable = 2 packages × 5 = 10.
		expect((await simulate(plan, { api_calls: 250 })).charges).toEqual([
			{ metric: "api_calls", model: "package", quantity: 250, billable_quantity: 200, amount: 10 },
		]);
		// 251 − 50 = 201 billable: a third package is started, 3 × 5 = 15.
		expect((await simulate(plan, { api_calls: 251 })).total).toBe(15);
		// Fewer units than included: billable 0, nothing to pay.
		expect((await simulate(plan, { api_calls: 30 })).charges[0]).toMatchObject({
			billable_quantity: 0,
			amount: 0,
		});
	});

	it("percentage: 10% of 1234.565 = 123.4565 → 123.46", async () => {
		const plan = await createPlan([
			{ metric: "deal_value", source: dealValue, model: "percentage", percent: 10 },
		]);
		expect(await simulate(plan, { deal_value: 1234.565 })).toMatchObject({
			charges: [
				{
					metric: "deal_value",
					model: "percentage",
					quantity: 1234.565,
					billable_quantity: 1234.565,
					amount: 123.46,
				},
			],
			total: 123.46,
		});
	});

	it("cost_plus: the cost as usage, 12.345 of it with 2.345 included, plus 25 % = 12.5", async () => {
		const plan = await createPlan([
			{
				metric: "model_cost",
				source: { kind: "action", type: "llm_call", aggregate: "cost", filter: { model: "gpt-4o" } },
				model: "cost_plus",
				markup_percent: 25,
				included_quantity: 2.345,
			},
		]);
		expect(await simulate(plan, { model_cost: 12.345 })).toMatchObject({
			charges: [
				{ metric: "model_cost", model: "cost_plus", quantity: 12.345, billable_quantity: 10, amount: 12.5 },
			],
			total: 12.5,
		});
	});

	it("refuses a cost_plus charge on anything but the cost of actions (400), and stores no plan", async () => {
		const before = (await call("GET", "/v1/pricing/rate-plans?limit=1")).body.total;
		const response = await post("/v1/pricing/rate-plans", {
			name: "Bad",
			charges: [{ metric: "tokens", source: tokens, model: "cost_plus", markup_percent: 25 }],
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain("charges[0].model");
		expect((await call("GET", "/v1/pricing/rate-plans?limit=1")).body.total).toBe(before);
	});

	it("lists the base fee first, then every metric, absent ones at 0", async () => {
		const plan = await createPlan(
			[
				{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 },
				{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 0.01 },
			],
			{ base_fee: 49.99 },
		);
		// 49.99 + 0 + 300 × 0.01 = 52.99.
		expect((await simulate(plan, { api_calls: 300 })).charges).toEqual([
			{ metric: "base_fee", model: "flat", quantity: 1, billable_quantity: 1, amount: 49.99 },
			{ metric: "tokens", model: "per_unit", quantity: 0, billable_quantity: 0, amount: 0 },
			{ metric: "api_calls", model: "per_unit", quantity: 300, billable_quantity: 300, amount: 3 },
		]);
		expect((await simulate(plan, { api_calls: 300 })).total).toBe(52.99);
	});

	it("leaves out a zero base fee", async () => {
		const plan = await createPlan([{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 1 }]);
		const result = await simulate(plan, {});
		expect(result.charges.map((line) => line.metric)).toEqual(["tokens"]);
		expect(result.total).toBe(0);
	});

	it("adds the rounded lines exactly: 0.1 + 0.2 = 0.3, not 0.30000000000000004", async () => {
		const plan = await createPlan([
			{ metric: "a", source: calls, model: "per_unit", unit_price: 0.1 },
			{ metric: "b", source: calls, model: "per_unit", unit_price: 0.2 },
		]);
		expect((await simulate(plan, { a: 1, b: 1 })).total).toBe(0.3);
	});

	it("rounds JPY to whole yen: 3 × ¥0.5 = ¥1.5 → ¥2", async () => {
		const plan = await createPlan(
			[{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 0.5 }],
			{
				currency: "JPY",
				base_fee: 500,
			},
		);
		const result = await simulate(plan, { api_calls: 3 });
		expect(result.currency).toBe("JPY");
		expect(result.charges.map((line) => line.amount)).toEqual([500, 2]);
		expect(result.total).toBe(502);
	});

	it("rounds KWD to 3 decimals: 1001 × 0.0015 = 1.5015 → 1.502", async () => {
		const plan = await createPlan(
			[{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 0.0015 }],
			{
				currency: "KWD",
				base_fee: 2.5,
			},
		);
		const result = await simulate(plan, { api_calls: 1001 });
		expect(result.charges.map((line) => line.amount)).toEqual([2.5, 1.502]);
		// 2.5 + 1.502 = 4.002.
		expect(result.total).toBe(4.002);
	});

	it("still simulates an archived plan", async () => {
		const plan = await createPlan([
			{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 0.01 },
		]);
		expect((await del(`/v1/pricing/rate-plans/${plan}`)).status).toBe(200);
		// 150 × 0.01 = 1.5.
		expect((await simulate(plan, { api_calls: 150 })).total).toBe(1.5);
	});
});

describe("POST /v1/pricing/simulate: refusals", () => {
	const perUnit = [
		{ metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 },
		{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 0.01 },
	];

	it("refuses a usage key that is not a metric of the plan, naming the plan's metrics", async () => {
		const plan = await createPlan(perUnit);
		const response = await post("/v1/pricing/simulate", {
			rate_plan_id: plan,
			usage: { tokens: 1, token: 5 },
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.message).toContain("token");
		expect(error.message).toContain("tokens, api_calls");
		expect(error.details).toEqual([
			{ path: "usage.token", message: expect.stringContaining("tokens, api_calls") },
		]);
	});

	it('refuses "base_fee" as a usage key: the base fee is not metered', async () => {
		const plan = await createPlan(perUnit, { base_fee: 10 });
		const error = expectError(
			await post("/v1/pricing/simulate", { rate_plan_id: plan, usage: { base_fee: 1 } }),
			400,
			"validation_error",
		);
		expect(error.details?.[0]?.path).toBe("usage.base_fee");
	});

	it('refuses "__proto__" as a usage key instead of dropping it', async () => {
		const plan = await createPlan(perUnit);
		// Sent raw: a JS object literal would set the prototype instead of carrying the key.
		const response = await call("POST", "/v1/pricing/simulate", {
			raw: `{"rate_plan_id": "${plan}", "usage": {"tokens": 1, "__proto__": {"tokens": 5}}}`,
			headers: { "Content-Type": "application/json" },
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.[0]?.path).toBe("usage.__proto__");
	});

	it.each<[string, unknown]>([
		["negative", -1],
		["a string", "100"],
		["null", null],
		["an object", { value: 1 }],
	])("refuses a quantity that is %s", async (_, quantity) => {
		const plan = await createPlan(perUnit);
		const response = await post("/v1/pricing/simulate", { rate_plan_id: plan, usage: { tokens: quantity } });
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.[0]?.path).toBe("usage.tokens");
	});

	it("refuses usage whose total a JSON number cannot carry exactly, naming the amount", async () => {
		// 1e15 + 1e15 + 0.01 would be written 2e15: rounded away silently without the check.
		const plan = await createPlan(
			[{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 1e15 }],
			{
				base_fee: 0.01,
			},
		);
		const error = expectError(
			await post("/v1/pricing/simulate", { rate_plan_id: plan, usage: { api_calls: 2 } }),
			400,
			"validation_error",
		);
		expect(error.message).toContain("The total 2000000000000000.01 USD");
		expect(error.details).toEqual([
			{ path: "usage", message: expect.stringContaining("2000000000000000.01") },
		]);
		// A charge of its own past exactness is named too.
		const costly = await createPlan([
			{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 999999999999.99 },
		]);
		const charge = expectError(
			await post("/v1/pricing/simulate", { rate_plan_id: costly, usage: { api_calls: 1001 } }),
			400,
			"validation_error",
		);
		expect(charge.details?.map((d) => d.path)).toEqual(["usage.api_calls", "usage"]);
		expect(charge.message).toContain("The api_calls charge 1000999999999989.99 USD");
	});

	it("answers totals that a JSON number carries exactly, up to 15 significant digits and beyond when exact", async () => {
		const baseFee = await createPlan(
			[{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 1 }],
			{
				base_fee: 9999999999999.99,
			},
		);
		expect((await simulate(baseFee, { api_calls: 0 })).total).toBe(9999999999999.99);
		const large = await createPlan([
			{ metric: "api_calls", source: calls, model: "per_unit", unit_price: 1e15 },
		]);
		expect((await simulate(large, { api_calls: 2 })).total).toBe(2e15);
	});

	it("refuses a quantity too large to be finite", async () => {
		const plan = await createPlan(perUnit);
		// JSON.parse reads 1e999 as Infinity.
		const response = await call("POST", "/v1/pricing/simulate", {
			raw: `{"rate_plan_id": "${plan}", "usage": {"tokens": 1e999}}`,
			headers: { "Content-Type": "application/json" },
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.[0]?.path).toBe("usage.tokens");
	});

	it.each<[string, Body, string]>([
		["a missing usage", { rate_plan_id: "plan_x" }, "usage"],
		["a missing rate_plan_id", { usage: {} }, "rate_plan_id"],
		["usage that is not an object", { rate_plan_id: "plan_x", usage: [1] }, "usage"],
		["an unknown field", { rate_plan_id: "plan_x", usage: {}, currency: "EUR" }, "currency"],
	])("refuses %s", async (_, body, path) => {
		const error = expectError(await post("/v1/pricing/simulate", body), 400, "validation_error");
		expect(error.details?.[0]?.path).toBe(path);
	});

	it("answers 404 for an unknown plan", async () => {
		const response = await post("/v1/pricing/simulate", { rate_plan_id: "plan_missing", usage: {} });
		expect(expectError(response, 404, "not_found").message).toContain("plan_missing");
	});
});
