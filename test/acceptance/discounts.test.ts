/**
 * Black-box checks of negotiated prices, coupons and discounts, written from docs/discounts.md's promises:
 * field shapes, bounds, statuses and the discount line's place on an invoice.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, del, expectError, get, patch, post } from "../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generateOne,
	sendActions,
	shiftPeriod,
} from "../invoicing/fixtures";

const calls = (unitPrice: number) => ({
	metric: "calls",
	source: { kind: "action", type: "llm_call", aggregate: "count" },
	model: "per_unit",
	unit_price: unitPrice,
});
const code = () => `A${crypto.randomUUID().slice(0, 8).toUpperCase()}`;

describe("coupons", () => {
	it("answer their fields, times_redeemed and status", async () => {
		const c = code();
		const created = await post("/v1/coupons", { code: c, percent_off: 20, duration: "once" });
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		expect(created.body).toMatchObject({
			code: c,
			percent_off: 20,
			duration: "once",
			times_redeemed: 0,
			status: "active",
		});
		expect(created.body.id).toMatch(/^[a-z]+_/);
		expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
		const read = await get(`/v1/coupons/${created.body.id}`);
		expect(read.body).toEqual(created.body);
		const list = await get("/v1/coupons");
		expect(list.body).toMatchObject({ limit: 20, offset: 0 });
		expect(list.body.coupons.map((x: { id: string }) => x.id)).toContain(created.body.id);
		expect(list.body.total).toBeGreaterThanOrEqual(1);
		const archived = await del(`/v1/coupons/${created.body.id}`);
		expect(archived.status).toBe(200);
		expect(archived.body.status).toBe("archived");
	});

	it.each([
		[{ percent_off: 0, duration: "once" }],
		[{ percent_off: 100.01, duration: "once" }],
		[{ percent_off: -5, duration: "once" }],
		[{ amount_off: 0, currency: "USD", duration: "once" }],
		[{ amount_off: 5, duration: "once" }],
		[{ percent_off: 10, amount_off: 5, currency: "USD", duration: "once" }],
		[{ duration: "once" }],
		[{ percent_off: 10, duration: "repeating" }],
		[{ percent_off: 10, duration: "repeating", duration_in_periods: 0 }],
		[{ percent_off: 10, duration: "repeating", duration_in_periods: 121 }],
		[{ percent_off: 10, duration: "once", duration_in_periods: 3 }],
		[{ percent_off: 10, duration: "forever", duration_in_periods: 3 }],
		[{ percent_off: 10, duration: "sometimes" }],
		[{ percent_off: 10, duration: "once", status: "archived" }],
	])("refuse %j with 400", async (fields) => {
		const c = code();
		expectError(await post("/v1/coupons", { code: c, ...fields }), 400, "validation_error");
		const list = await get("/v1/coupons?limit=100");
		expect(list.body.coupons.map((x: { code: string }) => x.code)).not.toContain(c);
	});

	it("take percent_off 100 and repeating 1 and 120", async () => {
		expect((await post("/v1/coupons", { code: code(), percent_off: 100, duration: "once" })).status).toBe(
			201,
		);
		for (const n of [1, 120]) {
			const r = await post("/v1/coupons", {
				code: code(),
				percent_off: 5,
				duration: "repeating",
				duration_in_periods: n,
			});
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			expect(r.body.duration_in_periods).toBe(n);
		}
	});

	it("refuse a duplicate code with 409, and unknown ids with 404", async () => {
		const c = code();
		expect((await post("/v1/coupons", { code: c, percent_off: 5, duration: "once" })).status).toBe(201);
		expectError(
			await post("/v1/coupons", { code: c, amount_off: 5, currency: "USD", duration: "once" }),
			409,
			"conflict",
		);
		expectError(await get("/v1/coupons/cpn_unknown"), 404, "not_found");
		expectError(await del("/v1/coupons/cpn_unknown"), 404, "not_found");
	});

	it("are reads for read-only keys, writes for read-write, nothing for SDK keys; environments apart", async () => {
		const readOnly = await createKey("read-only");
		const readWrite = await createKey("read-write");
		const sdk = await createKey("sdk");
		expectError(
			await post("/v1/coupons", { code: code(), percent_off: 5, duration: "once" }, { key: readOnly }),
			403,
			"forbidden",
		);
		expectError(await get("/v1/coupons", { key: sdk }), 403, "forbidden");
		const made = await post(
			"/v1/coupons",
			{ code: code(), percent_off: 5, duration: "once" },
			{ key: readWrite },
		);
		expect(made.status).toBe(201);
		expect((await get(`/v1/coupons/${made.body.id}`, { key: readOnly })).status).toBe(200);
		expectError(await del(`/v1/coupons/${made.body.id}`, { key: readOnly }), 403, "forbidden");
		const testKey = await createKey("admin", "test");
		expectError(await get(`/v1/coupons/${made.body.id}`, { key: testKey }), 404, "not_found");
		// the same code in the other environment is another coupon
		expect(
			(
				await post(
					"/v1/coupons",
					{ code: made.body.code, percent_off: 5, duration: "once" },
					{ key: testKey },
				)
			).status,
		).toBe(201);
	});
});

describe("discounts", () => {
	async function coupon(fields: Record<string, unknown>) {
		const r = await post("/v1/coupons", { code: code(), ...fields });
		expect(r.status, JSON.stringify(r.body)).toBe(201);
		return r.body as { id: string; code: string };
	}

	it("cover once: the start period; repeating: N periods; forever: null", async () => {
		const period = currentPeriod();
		for (const [fields, end] of [
			[{ percent_off: 10, duration: "once" }, period],
			[{ percent_off: 10, duration: "repeating", duration_in_periods: 3 }, shiftPeriod(period, 2)],
			[{ percent_off: 10, duration: "repeating", duration_in_periods: 1 }, period],
			[{ percent_off: 10, duration: "forever" }, null],
		] as const) {
			const { subscription } = await customer({ charges: [calls(1)] });
			const c = await coupon(fields);
			const r = await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.id });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			expect(r.body).toMatchObject({
				coupon_id: c.id,
				subscription_id: subscription.id,
				start_period: period,
				end_period: end,
			});
			expect(typeof r.body.id).toBe("string");
			expect(typeof r.body.created_at).toBe("string");
		}
	});

	it("count a redemption and refuse a second discount, archived, exhausted or wrong-currency coupons", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		const c = await coupon({ percent_off: 10, duration: "forever", max_redemptions: 1 });
		expect((await post(`/v1/subscriptions/${subscription.id}/discounts`, { code: c.code })).status).toBe(201);
		expect((await get(`/v1/coupons/${c.id}`)).body.times_redeemed).toBe(1);
		const other = await coupon({ percent_off: 5, duration: "once" });
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: other.id }),
			409,
			"conflict",
		);
		expect((await get(`/v1/coupons/${other.id}`)).body.times_redeemed).toBe(0);

		const second = await customer({ charges: [calls(1)] });
		expectError(
			await post(`/v1/subscriptions/${second.subscription.id}/discounts`, { coupon_id: c.id }),
			409,
			"conflict",
		);
		const archived = await coupon({ percent_off: 5, duration: "once" });
		await del(`/v1/coupons/${archived.id}`);
		expectError(
			await post(`/v1/subscriptions/${second.subscription.id}/discounts`, { coupon_id: archived.id }),
			409,
			"conflict",
		);
		const euros = await coupon({ amount_off: 5, currency: "EUR", duration: "once" });
		expectError(
			await post(`/v1/subscriptions/${second.subscription.id}/discounts`, { coupon_id: euros.id }),
			409,
			"conflict",
		);
		expectError(
			await post(`/v1/subscriptions/${second.subscription.id}/discounts`, { code: "NOPE_UNKNOWN" }),
			404,
			"not_found",
		);
		expectError(await post(`/v1/subscriptions/sub_unknown/discounts`, { coupon_id: c.id }), 404, "not_found");
		expectError(
			await post(`/v1/subscriptions/${second.subscription.id}/discounts`, {}),
			400,
			"validation_error",
		);
	});

	it("put the discount line after the minimum top-up, shaped as written", async () => {
		const { account, subscription, instances } = await customer({
			base_fee: 10,
			minimum_amount: 100,
			charges: [calls(1)],
		});
		const c = await coupon({ amount_off: 50, currency: "USD", duration: "once" });
		await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.id });
		await sendActions(actions(instances[0] as string, "llm_call", 5));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.line_items.map((l: { metric: string }) => l.metric)).toEqual([
			"base_fee",
			"calls",
			"minimum_commitment",
			"discount",
		]);
		expect(invoice.line_items.at(-1)).toMatchObject({
			metric: "discount",
			model: "flat",
			description: `${c.code} (USD 50.00 off)`,
			quantity: 1,
			amount: -50,
		});
		expect(invoice.amount).toBe(50);
	});

	it("never take an invoice below zero, and a percent line says (N% off)", async () => {
		const { account, subscription, instances } = await customer({ charges: [calls(1)] });
		const c = await coupon({ amount_off: 50, currency: "USD", duration: "forever" });
		await post(`/v1/subscriptions/${subscription.id}/discounts`, { code: c.code });
		await sendActions(actions(instances[0] as string, "llm_call", 3));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.line_items.at(-1)).toMatchObject({ metric: "discount", quantity: 1, amount: -3 });
		expect(invoice.amount).toBe(0);

		const p = await customer({ base_fee: 40, charges: [calls(1)] });
		const pc = await coupon({ percent_off: 20, duration: "once" });
		await post(`/v1/subscriptions/${p.subscription.id}/discounts`, { code: pc.code });
		const pi = await generateOne(currentPeriod(), p.account.id);
		expect(pi.line_items.at(-1)).toMatchObject({
			metric: "discount",
			description: `${pc.code} (20% off)`,
			amount: -8,
		});
	});
});

describe("price overrides", () => {
	it("show on create, pending after PATCH, null when nothing pending; unknown metric 400", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		expect(subscription).toHaveProperty("pending_price_overrides", null);
		const read = await get(`/v1/subscriptions/${subscription.id}`);
		expect(read.body.pending_price_overrides).toBeNull();
		expect(read.body).toHaveProperty("price_overrides");
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, {
			price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 0.5 }],
		});
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body.pending_price_overrides).toEqual([
			expect.objectContaining({ metric: "calls", model: "per_unit", unit_price: 0.5 }),
		]);
		expectError(
			await patch(`/v1/subscriptions/${subscription.id}`, {
				price_overrides: [{ metric: "nope", model: "per_unit", unit_price: 0.5 }],
			}),
			400,
			"validation_error",
		);
	});

	it("apply from the start on create, and simulate takes subscription_id", async () => {
		const plan = await post("/v1/pricing/rate-plans", { name: "P", charges: [calls(1)] });
		const account = await post("/v1/accounts", { name: "A", email: "a@a.test" });
		const key = `k-${crypto.randomUUID().slice(0, 8)}`;
		const sub = await post("/v1/subscriptions", {
			account_id: account.body.id,
			rate_plan_id: plan.body.id,
			agent_instance_ids: [key],
			price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 0.25, included_quantity: 2 }],
		});
		expect(sub.status, JSON.stringify(sub.body)).toBe(201);
		expect(sub.body.price_overrides).toEqual([
			expect.objectContaining({ metric: "calls", model: "per_unit", unit_price: 0.25, included_quantity: 2 }),
		]);
		expect(sub.body.pending_price_overrides).toBeNull();
		const sim = await post("/v1/pricing/simulate", { subscription_id: sub.body.id, usage: { calls: 10 } });
		expect(sim.status, JSON.stringify(sim.body)).toBe(200);
		expect(sim.body.total).toBe(2);
		const readOnly = await createKey("read-only");
		expect(
			(
				await post(
					"/v1/pricing/simulate",
					{ subscription_id: sub.body.id, usage: { calls: 10 } },
					{ key: readOnly },
				)
			).status,
		).toBe(200);
		expectError(
			await post("/v1/pricing/simulate", { subscription_id: "sub_unknown", usage: { calls: 1 } }),
			404,
			"not_found",
		);
		expectError(
			await post("/v1/pricing/simulate", {
				subscription_id: sub.body.id,
				rate_plan_id: plan.body.id,
				usage: {},
			}),
			400,
			"validation_error",
		);
		await sendActions(actions(key, "llm_call", 10));
		const invoice = await generateOne(currentPeriod(), account.body.id);
		expect(invoice.amount).toBe(2);
	});
});

describe("price overrides, further", () => {
	it("refuse an unknown metric or a bad model on create, storing no subscription", async () => {
		const plan = await post("/v1/pricing/rate-plans", { name: "P", charges: [calls(1)] });
		const account = await post("/v1/accounts", { name: "A", email: "a@a.test" });
		for (const override of [
			{ metric: "nope", model: "per_unit", unit_price: 1 },
			{ metric: "calls", model: "per_unit" },
			{ metric: "calls", model: "per_unit", unit_price: -1 },
			{
				metric: "calls",
				model: "per_unit",
				unit_price: 1,
				source: { kind: "action", type: "x", aggregate: "count" },
			},
		]) {
			const r = await post("/v1/subscriptions", {
				account_id: account.body.id,
				rate_plan_id: plan.body.id,
				agent_instance_ids: [`k-${crypto.randomUUID().slice(0, 8)}`],
				price_overrides: [override],
			});
			expectError(r, 400, "validation_error");
		}
		const list = await get(`/v1/subscriptions?account_id=${account.body.id}`);
		expect(list.body.total).toBe(0);
	});

	it("a PATCH leaves the current period at its prices: usage, upcoming and the invoice", async () => {
		const { account, subscription, instances } = await customer({ charges: [calls(1)] });
		await sendActions(actions(instances[0] as string, "llm_call", 4));
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, {
			price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 0.1 }],
		});
		expect(changed.status).toBe(200);
		expect(changed.body.price_overrides ?? []).toEqual([]);
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.body.total).toBe(4);
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.body.amount).toBe(4);
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(4);
	});

	it("from create, usage and upcoming honour them", async () => {
		const plan = await post("/v1/pricing/rate-plans", { name: "P", charges: [calls(1)] });
		const account = await post("/v1/accounts", { name: "A", email: "a@a.test" });
		const key = `k-${crypto.randomUUID().slice(0, 8)}`;
		const sub = await post("/v1/subscriptions", {
			account_id: account.body.id,
			rate_plan_id: plan.body.id,
			agent_instance_ids: [key],
			price_overrides: [{ metric: "calls", model: "package", package_size: 10, package_price: 3 }],
		});
		expect(sub.status).toBe(201);
		await sendActions(actions(key, "llm_call", 11));
		const usage = await get(`/v1/usage?subscription_id=${sub.body.id}`);
		expect(usage.body.total).toBe(6);
		expect(usage.body.charges[0]).toMatchObject({ metric: "calls", model: "package", amount: 6 });
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${sub.body.id}`);
		expect(upcoming.body.amount).toBe(6);
	});
});

describe("discounts, further", () => {
	async function coupon(fields: Record<string, unknown>, key?: string) {
		const r = await post("/v1/coupons", { code: code(), ...fields }, key ? { key } : {});
		expect(r.status, JSON.stringify(r.body)).toBe(201);
		return r.body as { id: string; code: string };
	}

	it("an expired coupon answers 409, and nothing is stored", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		const c = await coupon({
			percent_off: 10,
			duration: "once",
			redeem_by: new Date(Date.now() + 3_600_000).toISOString(),
		});
		await env.DB.prepare("UPDATE coupons SET redeem_by = ? WHERE id = ?")
			.bind(new Date(Date.now() - 1000).toISOString(), c.id)
			.run();
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.id }),
			409,
			"conflict",
		);
		expect((await get(`/v1/coupons/${c.id}`)).body.times_redeemed).toBe(0);
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.discount ?? null).toBeNull();
	});

	it("is applied by read-write keys, not read-only; a replay redeems once", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		const c = await coupon({ percent_off: 10, duration: "forever" });
		expectError(
			await post(
				`/v1/subscriptions/${subscription.id}/discounts`,
				{ coupon_id: c.id },
				{ key: await createKey("read-only") },
			),
			403,
			"forbidden",
		);
		const headers = { "Idempotency-Key": `d-${crypto.randomUUID()}` };
		const key = await createKey("read-write");
		const first = await post(
			`/v1/subscriptions/${subscription.id}/discounts`,
			{ coupon_id: c.id },
			{ key, headers },
		);
		expect(first.status).toBe(201);
		const again = await post(
			`/v1/subscriptions/${subscription.id}/discounts`,
			{ coupon_id: c.id },
			{ key, headers },
		);
		expect(again.status).toBe(201);
		expect(again.body).toEqual(first.body);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect((await get(`/v1/coupons/${c.id}`)).body.times_redeemed).toBe(1);
	});

	it("comes before credits: credits pay what the discount leaves", async () => {
		const { account, subscription } = await customer({ base_fee: 40, charges: [calls(1)] });
		expect((await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5 })).status).toBe(201);
		const c = await coupon({ percent_off: 20, duration: "once" });
		await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.id });
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(32);
		expect(invoice.credits_applied).toBe(5);
		expect(invoice.amount_due).toBe(27);
	});

	it("a zero-decimal currency writes its amount without decimals", async () => {
		const account = await post("/v1/accounts", { name: "J", email: "j@j.test", currency: "JPY" });
		const plan = await post("/v1/pricing/rate-plans", {
			name: "J",
			currency: "JPY",
			base_fee: 1000,
			charges: [calls(1)],
		});
		const key = `k-${crypto.randomUUID().slice(0, 8)}`;
		const sub = await post("/v1/subscriptions", {
			account_id: account.body.id,
			rate_plan_id: plan.body.id,
			agent_instance_ids: [key],
		});
		expect(sub.status, JSON.stringify(sub.body)).toBe(201);
		const c = await coupon({ amount_off: 300, currency: "JPY", duration: "once" });
		const usd = await coupon({ amount_off: 3, currency: "USD", duration: "once" });
		expectError(
			await post(`/v1/subscriptions/${sub.body.id}/discounts`, { coupon_id: usd.id }),
			409,
			"conflict",
		);
		expect((await post(`/v1/subscriptions/${sub.body.id}/discounts`, { coupon_id: c.id })).status).toBe(201);
		const invoice = await generateOne(currentPeriod(), account.body.id);
		expect(invoice.line_items.at(-1)).toMatchObject({ description: `${c.code} (JPY 300 off)`, amount: -300 });
	});
});

describe("coupons and discounts, conventions", () => {
	it("refuse unknown fields, bad list parameters; archive with no body", async () => {
		expectError(await get("/v1/coupons?limit=0"), 400, "validation_error");
		expectError(await get("/v1/coupons?limit=101"), 400, "validation_error");
		const { subscription } = await customer({ charges: [calls(1)] });
		const made = await post("/v1/coupons", { code: code(), percent_off: 5, duration: "once" });
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, {
				coupon_id: made.body.id,
				start_period: "2030-01",
			}),
			400,
			"validation_error",
		);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, {
				coupon_id: made.body.id,
				code: made.body.code,
			}),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/coupons", { code: code(), percent_off: 5, duration: "once", times_redeemed: 3 }),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/coupons", { code: code(), percent_off: 5.0000000000001, duration: "once" }),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/coupons", { code: code(), amount_off: 1e16, currency: "USD", duration: "once" }),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/coupons", { code: code(), amount_off: 5, currency: "usd", duration: "once" }),
			400,
			"validation_error",
		);
		expectError(
			await post("/v1/coupons", { code: "", percent_off: 5, duration: "once" }),
			400,
			"validation_error",
		);
		expectError(await post("/v1/coupons", { percent_off: 5, duration: "once" }), 400, "validation_error");
	});
});

describe("docs/discounts.md's promises", () => {
	it("a metric named twice is 400; re-sending the current prices withdraws a pending change", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		expectError(
			await patch(`/v1/subscriptions/${subscription.id}`, {
				price_overrides: [
					{ metric: "calls", model: "per_unit", unit_price: 0.5 },
					{ metric: "calls", model: "per_unit", unit_price: 0.4 },
				],
			}),
			400,
			"validation_error",
		);
		expect(
			(
				await patch(`/v1/subscriptions/${subscription.id}`, {
					price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 0.5 }],
				})
			).body.pending_price_overrides,
		).toHaveLength(1);
		const back = await patch(`/v1/subscriptions/${subscription.id}`, { price_overrides: [] });
		expect(back.status).toBe(200);
		expect(back.body.pending_price_overrides).toBeNull();
		expect(back.body.price_overrides).toEqual([]);
	});

	it("a cancelled subscription takes no discount; an unknown coupon id is 404", async () => {
		const { subscription } = await customer({ charges: [calls(1)] });
		const c = await post("/v1/coupons", { code: code(), percent_off: 5, duration: "once" });
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: "cpn_unknown" }),
			404,
			"not_found",
		);
		expect((await post(`/v1/subscriptions/${subscription.id}/cancel`, {})).status).toBe(200);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.body.id }),
			409,
			"conflict",
		);
	});
});

describe("simulate with a subscription", () => {
	it("answers the simulation's shape with the subscription's plan", async () => {
		const { subscription } = await customer({ base_fee: 5, charges: [calls(2)] });
		const sim = await post("/v1/pricing/simulate", { subscription_id: subscription.id, usage: { calls: 3 } });
		expect(sim.status).toBe(200);
		expect(sim.body).toMatchObject({ rate_plan_id: subscription.rate_plan_id, currency: "USD", total: 11 });
		expect(sim.body.charges[0]).toEqual({
			metric: "base_fee",
			model: "flat",
			quantity: 1,
			billable_quantity: 1,
			amount: 5,
		});
		expectError(
			await post("/v1/pricing/simulate", { subscription_id: subscription.id, usage: { nope: 1 } }),
			400,
			"validation_error",
		);
	});
});
