/**
 * Coupons and discounts (docs/discounts.md): create, list, get and archive coupons; apply one to a subscription,
 * with every refusal (archived, expired, exhausted, another currency, a second discount) answered 409 with
 * nothing stored, and max_redemptions holding under concurrent redemptions.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addPeriods } from "../../src/lib/time";
import { ADMIN_KEY, createAccount, createKey, del, expectError, get, post } from "../helpers";
import { currentPeriod, sdkKey } from "../invoicing/fixtures";
import { createPlan, subscribe, uniqueKey } from "../subscriptions/fixtures";

const code = (prefix = "C") => `${prefix}${crypto.randomUUID().slice(0, 8).toUpperCase()}`;

async function createCoupon(fields: Record<string, unknown> = {}, key = ADMIN_KEY) {
	const response = await post(
		"/v1/coupons",
		{ code: code(), percent_off: 20, duration: "forever", ...fields },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

async function discountRows(subscriptionId: string) {
	const { results } = await env.DB.prepare("SELECT * FROM subscription_discounts WHERE subscription_id = ?")
		.bind(subscriptionId)
		.all();
	return results;
}

async function timesRedeemed(couponId: string) {
	return (await get(`/v1/coupons/${couponId}`)).body.times_redeemed as number;
}

describe("POST /v1/coupons", () => {
	it("creates a percent-off coupon and an amount-off one", async () => {
		const percent = await createCoupon({ name: "Launch", duration: "repeating", duration_in_periods: 3 });
		expect(percent).toEqual({
			id: expect.stringMatching(/^cpn_[0-9a-z]{26}$/),
			code: percent.code,
			name: "Launch",
			percent_off: 20,
			amount_off: null,
			currency: null,
			duration: "repeating",
			duration_in_periods: 3,
			max_redemptions: null,
			redeem_by: null,
			times_redeemed: 0,
			status: "active",
			created_at: expect.stringMatching(/Z$/),
		});
		const redeemBy = new Date(Date.now() + 86_400_000).toISOString();
		const amount = await createCoupon({
			percent_off: undefined,
			amount_off: 50,
			currency: "USD",
			duration: "once",
			max_redemptions: 5,
			redeem_by: redeemBy,
		});
		expect(amount).toMatchObject({
			percent_off: null,
			amount_off: 50,
			currency: "USD",
			duration: "once",
			duration_in_periods: null,
			max_redemptions: 5,
			redeem_by: redeemBy,
		});
		expect((await get(`/v1/coupons/${amount.id}`)).body).toEqual(amount);
	});

	it("answers 409 for a code already used in the environment, but not across environments", async () => {
		const first = await createCoupon();
		const again = await post("/v1/coupons", { code: first.code, percent_off: 10, duration: "once" });
		expectError(again, 409, "conflict");
		const rows = await env.DB.prepare("SELECT count(*) AS n FROM coupons WHERE code = ?")
			.bind(first.code)
			.first<{ n: number }>();
		expect(rows?.n).toBe(1);
		const testKey = await createKey("read-write", "test");
		const other = await post(
			"/v1/coupons",
			{ code: first.code, percent_off: 10, duration: "once" },
			{ key: testKey },
		);
		expect(other.status).toBe(201);
		expectError(await get(`/v1/coupons/${first.id}`, { key: testKey }), 404, "not_found");
	});

	it.each([
		["no discount", { duration: "once" }, "percent_off"],
		["both kinds", { percent_off: 10, amount_off: 5, currency: "USD", duration: "once" }, "amount_off"],
		["percent 0", { percent_off: 0, duration: "once" }, "percent_off"],
		["percent over 100", { percent_off: 100.01, duration: "once" }, "percent_off"],
		["amount 0", { amount_off: 0, currency: "USD", duration: "once" }, "amount_off"],
		["amount without currency", { amount_off: 5, duration: "once" }, "currency"],
		["currency with percent", { percent_off: 5, currency: "USD", duration: "once" }, "currency"],
		["an unknown currency", { amount_off: 5, currency: "usd", duration: "once" }, "currency"],
		["repeating without periods", { percent_off: 5, duration: "repeating" }, "duration_in_periods"],
		[
			"periods when not repeating",
			{ percent_off: 5, duration: "forever", duration_in_periods: 2 },
			"duration_in_periods",
		],
		[
			"121 periods",
			{ percent_off: 5, duration: "repeating", duration_in_periods: 121 },
			"duration_in_periods",
		],
		["0 periods", { percent_off: 5, duration: "repeating", duration_in_periods: 0 }, "duration_in_periods"],
		["an unknown duration", { percent_off: 5, duration: "weekly" }, "duration"],
		["max_redemptions 0", { percent_off: 5, duration: "once", max_redemptions: 0 }, "max_redemptions"],
		[
			"redeem_by in the past",
			{ percent_off: 5, duration: "once", redeem_by: "2020-01-01T00:00:00Z" },
			"redeem_by",
		],
		["an unknown field", { percent_off: 5, duration: "once", times_redeemed: 3 }, ""],
	])("answers 400 for %s and stores nothing", async (_, fields, path) => {
		const c = code("BAD");
		const response = await post("/v1/coupons", { code: c, ...fields });
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
		const rows = await env.DB.prepare("SELECT count(*) AS n FROM coupons WHERE code = ?")
			.bind(c)
			.first<{ n: number }>();
		expect(rows?.n).toBe(0);
	});

	it("is forbidden to read-only keys, which may read coupons", async () => {
		const readOnly = await createKey("read-only");
		expectError(
			await post("/v1/coupons", { code: code(), percent_off: 5, duration: "once" }, { key: readOnly }),
			403,
			"forbidden",
		);
		expect((await get("/v1/coupons", { key: readOnly })).status).toBe(200);
	});
});

describe("GET /v1/coupons and DELETE /v1/coupons/{id}", () => {
	it("lists newest first in pages, and archives", async () => {
		const a = await createCoupon();
		const b = await createCoupon();
		const page = await get("/v1/coupons?limit=2");
		expect(page.status).toBe(200);
		expect(page.body.coupons.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
		expect(page.body).toMatchObject({ limit: 2, offset: 0 });
		expect(page.body.total).toBeGreaterThanOrEqual(2);
		const next = await get("/v1/coupons?limit=1&offset=1");
		expect(next.body.coupons[0].id).toBe(a.id);
		expectError(await get("/v1/coupons?limit=0"), 400, "validation_error");

		const archived = await del(`/v1/coupons/${a.id}`);
		expect(archived.status).toBe(200);
		expect(archived.body).toEqual({ ...a, status: "archived" });
		expect((await del(`/v1/coupons/${a.id}`)).body.status).toBe("archived");
		expectError(await del("/v1/coupons/cpn_unknown"), 404, "not_found");
		expectError(await get("/v1/coupons/cpn_unknown"), 404, "not_found");
	});
});

describe("POST /v1/subscriptions/{id}/discounts", () => {
	it("applies a coupon by id or by code from the current period, and shows it on the subscription", async () => {
		const { subscription } = await subscribe();
		const coupon = await createCoupon({ duration: "repeating", duration_in_periods: 3 });
		const response = await post(`/v1/subscriptions/${subscription.id}/discounts`, { code: coupon.code });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^dsc_[0-9a-z]{26}$/),
			coupon_id: coupon.id,
			subscription_id: subscription.id,
			start_period: currentPeriod(),
			end_period: addPeriods(currentPeriod(), 2),
			created_at: expect.stringMatching(/Z$/),
		});
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.discount).toEqual(response.body);
		expect(await timesRedeemed(coupon.id)).toBe(1);

		const once = await createCoupon({ duration: "once" });
		const other = await subscribe();
		const byId = await post(`/v1/subscriptions/${other.subscription.id}/discounts`, { coupon_id: once.id });
		expect(byId.status).toBe(201);
		expect(byId.body.end_period).toBe(currentPeriod());
		const forever = await createCoupon();
		const third = await subscribe();
		const third201 = await post(`/v1/subscriptions/${third.subscription.id}/discounts`, {
			coupon_id: forever.id,
		});
		expect(third201.body.end_period).toBeNull();
	});

	it("answers 409 for a second discount while one is active, storing nothing", async () => {
		const { subscription } = await subscribe();
		const first = await createCoupon();
		const second = await createCoupon();
		expect(
			(await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: first.id })).status,
		).toBe(201);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: second.id }),
			409,
			"conflict",
		);
		expect(await discountRows(subscription.id)).toHaveLength(1);
		expect(await timesRedeemed(second.id)).toBe(0);
	});

	it("takes a new discount once the last one has ended, and rates each period with the one covering it", async () => {
		const { subscription } = await subscribe();
		const once = await createCoupon({ duration: "once" });
		expect(
			(await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: once.id })).status,
		).toBe(201);
		// A month later: the once-only discount covered the previous period only.
		const previous = addPeriods(currentPeriod(), -1);
		await env.DB.prepare(
			"UPDATE subscription_discounts SET start_period = ?1, end_period = ?1 WHERE subscription_id = ?2",
		)
			.bind(previous, subscription.id)
			.run();
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.discount).toBeNull();
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`, { key: await sdkKey() });
		expect(usage.body.charges.map((c: { metric: string }) => c.metric)).not.toContain("discount");
		const next = await createCoupon({ percent_off: 10 });
		const applied = await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: next.id });
		expect(applied.status, JSON.stringify(applied.body)).toBe(201);
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.discount.coupon_id).toBe(next.id);
		expect(await discountRows(subscription.id)).toHaveLength(2);
	});

	it("answers 409 for an archived, expired or exhausted coupon, and for another currency", async () => {
		const { subscription } = await subscribe();
		const archived = await createCoupon();
		await del(`/v1/coupons/${archived.id}`);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: archived.id }),
			409,
			"conflict",
		);

		const expired = await createCoupon({ redeem_by: new Date(Date.now() + 60_000).toISOString() });
		await env.DB.prepare("UPDATE coupons SET redeem_by = ? WHERE id = ?")
			.bind(new Date(Date.now() - 1000).toISOString(), expired.id)
			.run();
		const error = expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: expired.id }),
			409,
			"conflict",
		);
		expect(error.message).toContain("expired");

		const exhausted = await createCoupon({ max_redemptions: 1 });
		const other = await subscribe();
		expect(
			(await post(`/v1/subscriptions/${other.subscription.id}/discounts`, { coupon_id: exhausted.id }))
				.status,
		).toBe(201);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: exhausted.id }),
			409,
			"conflict",
		);
		expect(await timesRedeemed(exhausted.id)).toBe(1);

		const euros = await createCoupon({ percent_off: undefined, amount_off: 5, currency: "EUR" });
		const mismatch = expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: euros.id }),
			409,
			"conflict",
		);
		expect(mismatch.message).toContain("EUR");
		expect(await discountRows(subscription.id)).toHaveLength(0);
		expect(await timesRedeemed(euros.id)).toBe(0);

		await post(`/v1/subscriptions/${subscription.id}/cancel`, {});
		const fine = await createCoupon();
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: fine.id }),
			409,
			"conflict",
		);
	});

	it("answers 404 for an unknown subscription, coupon or code, and 400 without exactly one of them", async () => {
		const { subscription } = await subscribe();
		const coupon = await createCoupon();
		expectError(
			await post("/v1/subscriptions/sub_unknown/discounts", { coupon_id: coupon.id }),
			404,
			"not_found",
		);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: "cpn_x" }),
			404,
			"not_found",
		);
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { code: "NOPE-NOPE" }),
			404,
			"not_found",
		);
		expectError(await post(`/v1/subscriptions/${subscription.id}/discounts`, {}), 400, "validation_error");
		expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, {
				coupon_id: coupon.id,
				code: coupon.code,
			}),
			400,
			"validation_error",
		);
		expect(await discountRows(subscription.id)).toHaveLength(0);
	});

	it("never redeems past max_redemptions, nor gives one subscription two discounts, under concurrency", async () => {
		const coupon = await createCoupon({ max_redemptions: 3 });
		const subs = await Promise.all(Array.from({ length: 8 }, () => subscribe([uniqueKey()])));
		const responses = await Promise.all(
			subs.map(({ subscription }) =>
				post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: coupon.id }),
			),
		);
		expect(responses.filter((r) => r.status === 201)).toHaveLength(3);
		for (const r of responses.filter((r) => r.status !== 201)) expectError(r, 409, "conflict");
		expect(await timesRedeemed(coupon.id)).toBe(3);

		const { subscription } = await subscribe();
		const coupons = await Promise.all(Array.from({ length: 6 }, () => createCoupon()));
		const racing = await Promise.all(
			coupons.map((c) => post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: c.id })),
		);
		expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
		expect(await discountRows(subscription.id)).toHaveLength(1);
		const redeemed = await Promise.all(coupons.map((c) => timesRedeemed(c.id)));
		expect(redeemed.reduce((a, b) => a + b, 0)).toBe(1);
	});

	it("keeps environments apart", async () => {
		const testKey = await createKey("read-write", "test");
		const coupon = await createCoupon();
		const account = await createAccount(testKey);
		const plan = await createPlan({}, testKey);
		const sub = await post(
			"/v1/subscriptions",
			{ account_id: account.id, rate_plan_id: plan.id, agent_instance_ids: [uniqueKey()] },
			{ key: testKey },
		);
		expectError(
			await post(`/v1/subscriptions/${sub.body.id}/discounts`, { coupon_id: coupon.id }, { key: testKey }),
			404,
			"not_found",
		);
	});
});
