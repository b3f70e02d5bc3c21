/**
 * An amount-off coupon must be in the subscription's billing currency (docs/currencies.md), not its plan's: a
 * EUR plan billed in USD takes a USD coupon, and a EUR one is refused with 409 and nothing stored.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addRate, foreignCustomer } from "../exchange-rates/fixtures";
import { expectError, get, post } from "../helpers";
import { currentPeriod, generateOne } from "../invoicing/fixtures";

async function amountOff(currency: string) {
	const code = `BC${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
	const response = await post("/v1/coupons", { code, amount_off: 5, currency, duration: "once" });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string };
}

async function storedDiscounts(subscriptionId: string) {
	const { results } = await env.DB.prepare("SELECT id FROM subscription_discounts WHERE subscription_id = ?")
		.bind(subscriptionId)
		.all();
	return results;
}

describe("POST /v1/subscriptions/{id}/discounts with a billing currency", () => {
	it("refuses a coupon in the plan's currency when the subscription is billed in another", async () => {
		const { subscription } = await foreignCustomer("EUR", "USD");
		expect(subscription.billing_currency).toBe("USD");
		const euros = await amountOff("EUR");
		const error = expectError(
			await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: euros.id }),
			409,
			"conflict",
		);
		expect(error.message).toContain("EUR");
		expect(error.message).toContain("USD");
		expect(await storedDiscounts(subscription.id)).toHaveLength(0);
		expect((await get(`/v1/coupons/${euros.id}`)).body.times_redeemed).toBe(0);
	});

	it("takes a coupon in the billing currency", async () => {
		const { subscription } = await foreignCustomer("EUR", "USD");
		const dollars = await amountOff("USD");
		const applied = await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: dollars.id });
		expect(applied.status, JSON.stringify(applied.body)).toBe(201);
		expect(applied.body.coupon_id).toBe(dollars.id);
		expect(await storedDiscounts(subscription.id)).toHaveLength(1);
		expect((await get(`/v1/coupons/${dollars.id}`)).body.times_redeemed).toBe(1);
	});

	it("takes its amount off the converted invoice, in the billing currency", async () => {
		await addRate("EUR", "USD", 1.1, new Date(Date.now() - 86_400_000).toISOString());
		const { account, subscription } = await foreignCustomer("EUR", "USD");
		const dollars = await amountOff("USD");
		expect(
			(await post(`/v1/subscriptions/${subscription.id}/discounts`, { coupon_id: dollars.id })).status,
		).toBe(201);
		const invoice = (await generateOne(currentPeriod(), account.id)) as Record<string, any>;
		// A base fee of 10 EUR is 11.00 USD; the coupon takes USD 5 off it.
		expect(invoice.currency).toBe("USD");
		const discount = invoice.line_items.find((line: { metric: string }) => line.metric === "discount");
		expect(discount).toMatchObject({ amount: -5, original_amount: -5, original_currency: "USD" });
		expect(invoice.amount).toBe(6);
	});
});
