/**
 * Proration of the base fee (CONTRACT §19), figures computed by hand. The pure rules first, then whole invoices
 * through the API for months of 31, 28 and 30 days and a zero-decimal currency.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { periodWindow } from "../../src/billing-period/period";
import {
	baseFeeProration,
	proratedBaseFee,
	proratedBaseFeeDescription,
	rateWithProration,
} from "../../src/billing-period/proration";
import { Decimal } from "../../src/lib/decimal";
import { get } from "../helpers";
import { customer, generateOne, linesOf } from "../invoicing/fixtures";
import { backdateSubscription } from "./fixtures";

const d = (x: string | number) => Decimal.from(x);

describe("baseFeeProration", () => {
	const october = periodWindow("2026-10"); // 31 days
	it("is null for a plan that does not prorate, or a subscription active the whole period", () => {
		expect(
			baseFeeProration(false, october, { startedAt: "2026-10-23T00:00:00.000Z", endsAt: null }),
		).toBeNull();
		expect(
			baseFeeProration(true, october, { startedAt: "2026-09-01T00:00:00.000Z", endsAt: null }),
		).toBeNull();
		expect(
			baseFeeProration(true, october, {
				startedAt: "2026-10-01T00:00:00.000Z",
				endsAt: "2026-11-01T00:00:00.000Z",
			}),
		).toBeNull();
	});

	it("counts the seconds active within the period", () => {
		// Started on the 23rd at midnight: the 23rd … 31st are 9 days of 31.
		const atStart = baseFeeProration(true, october, { startedAt: "2026-10-23T00:00:00.000Z", endsAt: null });
		expect(atStart).toEqual({ activeSeconds: 9 * 86_400, periodSeconds: 31 * 86_400 });
		expect(proratedBaseFeeDescription(atStart as NonNullable<typeof atStart>)).toBe(
			"Base fee (prorated 9 of 31 days)",
		);
		// Never active in the period: nothing.
		expect(
			baseFeeProration(true, october, {
				startedAt: "2026-09-01T00:00:00.000Z",
				endsAt: "2026-09-30T00:00:00.000Z",
			}),
		).toEqual({ activeSeconds: 0, periodSeconds: 31 * 86_400 });
	});

	it("rounds half-up to the currency's minor unit", () => {
		const half = { activeSeconds: 15 * 86_400, periodSeconds: 30 * 86_400 };
		// 1,001 JPY × 15/30 = 500.5 → 501 (JPY has no minor unit)
		expect(proratedBaseFee(d(1001), half, "JPY").toString()).toBe("501");
		// 0.05 USD × 15/30 = 0.025 → 0.03
		expect(proratedBaseFee(d("0.05"), half, "USD").toString()).toBe("0.03");
		// 1.0005 KWD × 15/30 = 0.50025 → 0.500 (three decimals)
		expect(proratedBaseFee(d("1.0005"), half, "KWD").toString()).toBe("0.5");
	});

	it("never exceeds the full fee, and the whole period is the whole fee (property)", () => {
		const periods = fc.constantFrom("2026-02", "2028-02", "2026-04", "2026-10", "2026-12");
		const currency = fc.constantFrom("USD", "JPY", "KWD", "EUR");
		const fee = fc.integer({ min: 0, max: 10_000_000 }).map((units) => d(units).divRoundHalfUp(d(100), 2));
		fc.assert(
			fc.property(
				periods,
				currency,
				fee,
				fc.double({ min: 0, max: 1, noNaN: true }),
				fc.double({ min: 0, max: 1, noNaN: true }),
				(period, cur, baseFee, a, b) => {
					const window = periodWindow(period);
					const start = Date.parse(window.start);
					const length = Date.parse(window.end) - start;
					const [from, to] = [Math.min(a, b), Math.max(a, b)].map(
						(f) => new Date(start + Math.floor(f * length)),
					);
					const pricing = { currency: cur, base_fee: baseFee, charges: [] };
					const full = rateWithProration(pricing, new Map(), null).total;
					const proration = baseFeeProration(true, window, {
						startedAt: (from as Date).toISOString(),
						endsAt: (to as Date).toISOString(),
					});
					const prorated = rateWithProration(pricing, new Map(), proration).total;
					expect(prorated.lte(full)).toBe(true);
					expect(prorated.isNegative()).toBe(false);
					const whole = baseFeeProration(true, window, { startedAt: window.start, endsAt: window.end });
					expect(rateWithProration(pricing, new Map(), whole).total.eq(full)).toBe(true);
				},
			),
			{ numRuns: 300 },
		);
	});
});

/** A prorating customer whose subscription started (and maybe ended) at fixed instants. */
async function prorated(plan: Record<string, unknown>, startedAt: string, cancelledAt?: string) {
	const c = await customer({ prorate: true, charges: [], ...plan });
	await backdateSubscription(c.subscription.id, startedAt);
	if (cancelledAt !== undefined) {
		await env.DB.prepare("UPDATE subscriptions SET status = 'cancelled', cancelled_at = ?1 WHERE id = ?2")
			.bind(cancelledAt, c.subscription.id)
			.run();
	}
	return c;
}

describe("invoices of prorating plans", () => {
	it("prorate from the start in a 31-day month", async () => {
		const { account } = await prorated({ base_fee: 100 }, "2026-10-23T00:00:00.000Z");
		const invoice = await generateOne("2026-10", account.id);
		// 100 × 9/31 = 29.032… → 29.03
		expect(linesOf(invoice)).toEqual([["base_fee", 1, 29.03]]);
		expect(invoice.line_items[0]?.description).toBe("Base fee (prorated 9 of 31 days)");
		expect(invoice.amount).toBe(29.03);
	});

	it("prorate to the cancellation in a 28-day month", async () => {
		const { account } = await prorated(
			{ base_fee: 100 },
			"2026-01-15T00:00:00.000Z",
			"2026-02-08T00:00:00.000Z",
		);
		const invoice = await generateOne("2026-02", account.id);
		// 1st … 7th of February: 100 × 7/28 = 25.00
		expect(linesOf(invoice)).toEqual([["base_fee", 1, 25]]);
		expect(invoice.line_items[0]?.description).toBe("Base fee (prorated 7 of 28 days)");
	});

	it("prorate between a start and a cancellation in the same 30-day month", async () => {
		const { account } = await prorated(
			{ base_fee: 49.99 },
			"2026-09-10T12:00:00.000Z",
			"2026-09-20T00:00:00.000Z",
		);
		const invoice = await generateOne("2026-09", account.id);
		// 9.5 days = 820,800 s of 2,592,000 s: 49.99 × 820,800 / 2,592,000 = 15.830166… → 15.83; 9.5 days read as 10
		expect(linesOf(invoice)).toEqual([["base_fee", 1, 15.83]]);
		expect(invoice.line_items[0]?.description).toBe("Base fee (prorated 10 of 30 days)");
	});

	it("prorate in a zero-decimal currency, rounding half-up to whole yen", async () => {
		const { account } = await prorated({ base_fee: 1001, currency: "JPY" }, "2026-04-16T00:00:00.000Z");
		const invoice = await generateOne("2026-04", account.id);
		// 16th … 30th = 15 of 30 days: 1,001 × 15/30 = 500.5 → 501 JPY
		expect(invoice).toMatchObject({ currency: "JPY", amount: 501 });
		expect(invoice.line_items[0]?.description).toBe("Base fee (prorated 15 of 30 days)");
	});

	it("bill the whole fee when the plan does not prorate (the v1 default)", async () => {
		const c = await customer({ base_fee: 100, charges: [] });
		await backdateSubscription(c.subscription.id, "2026-10-23T00:00:00.000Z");
		const invoice = await generateOne("2026-10", c.account.id);
		expect(linesOf(invoice)).toEqual([["base_fee", 1, 100]]);
		expect(invoice.line_items[0]?.description).toBe("Base fee");
	});

	it("rate real-time usage the same way as the invoice", async () => {
		const { subscription } = await prorated({ base_fee: 100 }, "2026-10-23T00:00:00.000Z");
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=2026-10`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(usage.body.charges).toEqual([
			{ metric: "base_fee", model: "flat", quantity: 1, billable_quantity: 1, amount: 29.03 },
		]);
		expect(usage.body.total).toBe(29.03);
	});
});
