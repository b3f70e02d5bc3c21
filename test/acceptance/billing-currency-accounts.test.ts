/**
 * Black-box checks of §35 around the invoices: a missing rate (409 naming the pair, the other invoices issued,
 * the cron issuing them later), real-time usage and upcoming invoices at the rate in effect now, several billing
 * currencies on one account (grants, balances, reports per currency) and coupons in another currency.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { createAccount, expectError, get, post } from "../helpers";
import { createPlan, generate, invoicesOf, sendActions, shiftPeriod } from "../invoicing/fixtures";
import { calls, exchangeRate, grant, PERIOD, perCall, RANGE, subscription } from "./billing-fixtures";

interface Sub {
	id: string;
	instance: string;
}

async function account(plan: Record<string, unknown>, ...billingCurrencies: string[]) {
	const ratePlan = await createPlan({ charges: [], ...plan });
	const acct = await createAccount();
	const subs: Sub[] = [];
	for (const currency of billingCurrencies)
		subs.push(await subscription(acct.id, ratePlan.id, { billing_currency: currency }));
	return { account: acct, subs };
}

/** Asserts a 409 conflict whose message names the pair. */
function namesPair(response: Awaited<ReturnType<typeof get>>, base: string, quote: string) {
	const error = expectError(response, 409, "conflict");
	expect(error.message).toContain(base);
	expect(error.message).toContain(quote);
}

describe("no rate in effect", () => {
	it("refuses that invoice with 409 naming the pair, issues the others, and issues it once a rate exists", async () => {
		const { account: acct, subs } = await account({ currency: "USD", charges: [perCall(1)] }, "USD", "MXN");
		const inDollars = subs[0] as Sub;
		const inPesos = subs[1] as Sub;
		await calls(inDollars.instance, 3);
		await calls(inPesos.instance, 2);
		namesPair(
			await post("/v1/invoices/generate", { billing_period: PERIOD, account_id: acct.id }),
			"USD",
			"MXN",
		);
		const issued = await invoicesOf(acct.id);
		expect(issued.map((i) => [i.subscription_id, i.currency, i.amount])).toEqual([[inDollars.id, "USD", 3]]);

		// a future rate is not in effect yet
		await exchangeRate("USD", "MXN", 20, new Date(Date.now() + 86_400_000).toISOString());
		namesPair(
			await post("/v1/invoices/generate", { billing_period: PERIOD, account_id: acct.id }),
			"USD",
			"MXN",
		);

		await exchangeRate("USD", "MXN", 17.25);
		const later = await generate(PERIOD, acct.id);
		expect(later.status).toBe(201);
		// 2.00 USD × 17.25 = 34.50 MXN
		expect(later.invoices.map((i) => [i.subscription_id, i.currency, i.amount, i.kind])).toEqual([
			[inPesos.id, "MXN", 34.5, "regular"],
		]);
		expect(await generate(PERIOD, acct.id)).toEqual({ status: 200, invoices: [] });
	});

	it("of a past period: the five-minute cron issues the refused invoice once a rate is in effect", async () => {
		const plan = await createPlan({ currency: "USD", charges: [perCall(2)] });
		const acct = await createAccount();
		const sub = await subscription(acct.id, plan.id, {
			billing_currency: "TRY",
			started_at: new Date(Date.now() - 34 * 86_400_000).toISOString(),
		});
		const previous = shiftPeriod(PERIOD, -1);
		const lastHour = new Date(Date.parse(`${PERIOD}-01T00:00:00Z`) - 3_600_000).toISOString();
		await sendActions(
			[1, 2, 3].map(() => ({ agent_key: sub.instance, action_type: "call", timestamp: lastHour })),
		);
		namesPair(
			await post("/v1/invoices/generate", { billing_period: previous, account_id: acct.id }),
			"USD",
			"TRY",
		);
		expect(await invoicesOf(acct.id)).toEqual([]);

		await exchangeRate("USD", "TRY", 34.5);
		const worker: ExportedHandler<Env> = entry;
		await worker.scheduled?.(
			createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }),
			env as Env,
			createExecutionContext(),
		);
		const deadline = Date.now() + 10_000;
		let issued = await invoicesOf(acct.id);
		while (issued.length === 0 && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 250));
			issued = await invoicesOf(acct.id);
		}
		// 3 × 2.00 = 6.00 USD × 34.5 = 207.00 TRY
		expect(issued.map((i) => [i.billing_period, i.currency, i.amount])).toEqual([[previous, "TRY", 207]]);
	});
});

describe("real-time usage and upcoming invoices", () => {
	it("convert at the rate in effect now, or answer 409 naming the pair", async () => {
		const { subs } = await account({ currency: "USD", charges: [perCall(2.5)] }, "ZAR");
		const sub = subs[0] as Sub;
		await calls(sub.instance, 3);
		namesPair(await get(`/v1/usage?subscription_id=${sub.id}`), "USD", "ZAR");
		namesPair(await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`), "USD", "ZAR");

		const now = await exchangeRate("USD", "ZAR", 18.123);
		// 3 × 2.50 = 7.50 USD × 18.123 = 135.9225 → 135.92 ZAR
		const usage = await get(`/v1/usage?subscription_id=${sub.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(usage.body).toMatchObject({ currency: "ZAR", total: 135.92 });
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(upcoming.body).toMatchObject({ id: null, number: null, currency: "ZAR", amount: 135.92 });
		expect(upcoming.body.exchange_rate).toEqual({
			base: "USD",
			quote: "ZAR",
			rate: 18.123,
			effective_at: now.effective_at,
		});
		expect(upcoming.body.line_items).toMatchObject([
			{ original_amount: 7.5, original_currency: "USD", amount: 135.92 },
		]);

		await exchangeRate("USD", "ZAR", 20);
		expect((await get(`/v1/usage?subscription_id=${sub.id}`)).body.total).toBe(150);
		expect((await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`)).body.amount).toBe(150);
	});
});

describe("several billing currencies on one account", () => {
	it("get their own invoices, grants, balances and report figures, never added together", async () => {
		await exchangeRate("USD", "HKD", 7.8);
		const { account: acct, subs } = await account({ currency: "USD", charges: [perCall(1)] }, "USD", "HKD");
		const inDollars = subs[0] as Sub;
		const inHkd = subs[1] as Sub;
		const dollars = await grant(acct.id, 100);
		expect(dollars.currency).toBe("USD");
		const hkd = await grant(acct.id, 10, { currency: "HKD" });
		expect(hkd.currency).toBe("HKD");
		expectError(
			await post(`/v1/accounts/${acct.id}/credit-grants`, { amount: 5, currency: "hkd" }),
			400,
			"validation_error",
		);

		await calls(inDollars.instance, 20);
		await calls(inHkd.instance, 5);
		const made = await generate(PERIOD, acct.id);
		expect(made.status).toBe(201);
		const bySub = new Map(made.invoices.map((i) => [i.subscription_id, i]));
		// USD: 20.00, paid by the USD grant alone. HKD: 5 × 1.00 × 7.8 = 39.00, the HKD grant pays 10.
		expect(bySub.get(inDollars.id)).toMatchObject({
			currency: "USD",
			amount: 20,
			credits_applied: 20,
			amount_due: 0,
			status: "paid",
		});
		expect(bySub.get(inHkd.id)).toMatchObject({
			currency: "HKD",
			amount: 39,
			credits_applied: 10,
			amount_due: 29,
			status: "open",
		});

		const usdBalance = await get(`/v1/accounts/${acct.id}/balance`);
		expect(usdBalance.body).toMatchObject({ account_id: acct.id, currency: "USD", available: 80 });
		const hkdBalance = await get(`/v1/accounts/${acct.id}/balance?currency=HKD`);
		expect(hkdBalance.body).toMatchObject({ account_id: acct.id, currency: "HKD", available: 0 });

		const row = async (query: string) => {
			const report = await get(`/v1/reports/revenue?${RANGE}&group_by=customer${query}`);
			expect(report.status, JSON.stringify(report.body)).toBe(200);
			return report.body.breakdown.find((r: { id: string }) => r.id === acct.id)?.revenue;
		};
		expect(await row("")).toBe(20);
		expect(await row("&currency=USD")).toBe(20);
		expect(await row("&currency=HKD")).toBe(39);

		const revenueHkd = await get(`/v1/reports/revenue?${RANGE}&currency=HKD`);
		const pnlHkd = await get(`/v1/reports/pnl?${RANGE}&currency=HKD`);
		expect(pnlHkd.body).toMatchObject({ currency: "HKD", revenue: revenueHkd.body.revenue });
	});
});

describe("coupons and the billing currency", () => {
	it("refuse an amount_off coupon in another currency with 409, and take one in the billing currency", async () => {
		await exchangeRate("USD", "ILS", 3.7);
		const { account: acct, subs } = await account({ currency: "USD", charges: [perCall(1)] }, "ILS");
		const sub = subs[0] as Sub;
		const coupon = async (currency: string) => {
			const code = `FX${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
			const r = await post("/v1/coupons", { code, amount_off: 5, currency, duration: "once" });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			return r.body as { id: string; code: string };
		};
		const dollars = await coupon("USD");
		expectError(
			await post(`/v1/subscriptions/${sub.id}/discounts`, { coupon_id: dollars.id }),
			409,
			"conflict",
		);
		expect((await get(`/v1/coupons/${dollars.id}`)).body.times_redeemed).toBe(0);
		const shekels = await coupon("ILS");
		const applied = await post(`/v1/subscriptions/${sub.id}/discounts`, { coupon_id: shekels.id });
		expect(applied.status, JSON.stringify(applied.body)).toBe(201);

		await calls(sub.instance, 10);
		const made = await generate(PERIOD, acct.id);
		const [inv] = made.invoices as any[];
		// 10.00 USD × 3.7 = 37.00 ILS, less the ILS 5.00 discount computed in the billing currency
		expect(inv.line_items.find((l: { metric: string }) => l.metric === "discount")).toMatchObject({
			amount: -5,
			original_amount: -5,
			original_currency: "ILS",
		});
		expect(inv).toMatchObject({ currency: "ILS", amount: 32 });
	});
});

describe("corrections and balances in the billing currency", () => {
	it("a credit note is in the invoice's currency and credits a grant in that currency", async () => {
		await exchangeRate("USD", "KRW", 1385.5);
		const { account: acct, subs } = await account({ currency: "USD", charges: [perCall(1.23)] }, "KRW");
		await calls((subs[0] as Sub).instance, 1);
		const [inv] = (await generate(PERIOD, acct.id)).invoices as any[];
		// 1.23 USD × 1385.5 = 1704.165 → 1704 KRW
		expect(inv).toMatchObject({ currency: "KRW", amount: 1704 });
		expect((await post(`/v1/invoices/${inv.id}/pay`, {})).status).toBe(200);
		const note = await post(`/v1/invoices/${inv.id}/credit-notes`, { amount: 500, reason: "billing_error" });
		expect(note.status, JSON.stringify(note.body)).toBe(201);
		expect(note.body).toMatchObject({ currency: "KRW", amount: 500, applied: { credited: 500 } });
		const grants = (await get(`/v1/accounts/${acct.id}/credit-grants`)).body.credit_grants;
		expect(grants.map((g: { amount: number; currency: string }) => [g.amount, g.currency])).toEqual([
			[500, "KRW"],
		]);
		expect((await get(`/v1/accounts/${acct.id}/balance?currency=KRW`)).body).toMatchObject({
			available: 500,
		});
		expect((await get(`/v1/accounts/${acct.id}/balance`)).body).toMatchObject({
			currency: "USD",
			available: 0,
		});
	});

	it("a percent_off discount is taken from the converted lines, rounded once", async () => {
		await exchangeRate("USD", "THB", 35.55);
		const { account: acct, subs } = await account({ currency: "USD", charges: [perCall(0.33)] }, "THB");
		const code = `FX${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
		const coupon = await post("/v1/coupons", { code, percent_off: 15, duration: "once" });
		const sub = subs[0] as Sub;
		expect((await post(`/v1/subscriptions/${sub.id}/discounts`, { coupon_id: coupon.body.id })).status).toBe(
			201,
		);
		await calls(sub.instance, 3);
		const [inv] = (await generate(PERIOD, acct.id)).invoices as any[];
		// 3 × 0.33 = 0.99 USD × 35.55 = 35.1945 → 35.19 THB; 15% of 35.19 = 5.2785 → −5.28; amount 29.91
		expect(inv.line_items.find((l: { metric: string }) => l.metric === "discount")).toMatchObject({
			amount: -5.28,
			original_amount: -5.28,
			original_currency: "THB",
		});
		expect(inv.amount).toBe(29.91);
	});

	it("a balance or grant in a code that is not ISO 4217 is refused with 400", async () => {
		const acct = await createAccount();
		expectError(await get(`/v1/accounts/${acct.id}/balance?currency=ABC`), 400, "validation_error");
		expectError(
			await post(`/v1/accounts/${acct.id}/credit-grants`, { amount: 5, currency: "ABC" }),
			400,
			"validation_error",
		);
		expect((await get(`/v1/accounts/${acct.id}/credit-grants`)).body.total).toBe(0);
	});
});
