/**
 * The discount line (docs/discounts.md#the-discount-line): after the minimum commitment's top-up and before
 * credits; a percentage of the other lines' sum rounded once, or an amount up to that sum, granted at most once
 * per period across the regular and supplementary invoices; shown by upcoming invoices and real-time usage.
 */
import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	linesOf,
	sdkKey,
	sendActions,
} from "../invoicing/fixtures";

const calls = (unitPrice: number, extra: Record<string, unknown> = {}) => ({
	metric: "calls",
	description: "Calls",
	source: { kind: "action", type: "llm_call", aggregate: "count" },
	model: "per_unit",
	unit_price: unitPrice,
	...extra,
});

async function applyCoupon(subscriptionId: string, fields: Record<string, unknown>) {
	const code = `D${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
	const coupon = await post("/v1/coupons", { code, duration: "forever", ...fields });
	expect(coupon.status, JSON.stringify(coupon.body)).toBe(201);
	const discount = await post(`/v1/subscriptions/${subscriptionId}/discounts`, { code });
	expect(discount.status, JSON.stringify(discount.body)).toBe(201);
	return code;
}

describe("percent-off discounts", () => {
	it("take the percentage of the other lines, rounded once, on usage, upcoming and the invoice", async () => {
		const { account, subscription, instances } = await customer({ base_fee: 10, charges: [calls(0.333)] });
		const code = await applyCoupon(subscription.id, { percent_off: 15 });
		await sendActions(actions(instances[0] as string, "llm_call", 7));
		// 10 + 7 × 0.333 = 12.331 → 12.33; 15 % of 12.33 = 1.8495 → 1.85.
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`, { key: await sdkKey() });
		expect(usage.body.charges.at(-1)).toEqual({
			metric: "discount",
			model: "flat",
			quantity: 1,
			billable_quantity: 1,
			amount: -1.85,
		});
		expect(usage.body.total).toBe(10.48);

		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.body.amount).toBe(10.48);
		expect(upcoming.body.line_items.at(-1)).toMatchObject({
			metric: "discount",
			description: `${code} (15% off)`,
		});

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 10],
			["calls", 7, 2.33],
			["discount", 1, -1.85],
		]);
		expect(invoice.line_items.at(-1)?.description).toBe(`${code} (15% off)`);
		expect(invoice.amount).toBe(10.48);

		// Late usage: the whole period's discount is 15 % of 10 + 10 × 0.333 = 13.33 → 2.00; 0.15 more.
		await sendActions(actions(instances[0] as string, "llm_call", 3));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(linesOf(supplementary)).toEqual([
			["calls", 3, 1],
			["discount", 1, -0.15],
		]);
		expect(supplementary.line_items.at(-1)?.description).toBe(`${code} (15% off)`);
	});

	it("come after the minimum commitment's top-up", async () => {
		const { account, subscription, instances } = await customer({
			base_fee: 0,
			minimum_amount: 100,
			charges: [calls(1)],
		});
		await applyCoupon(subscription.id, { percent_off: 20 });
		await sendActions(actions(instances[0] as string, "llm_call", 30));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice)).toEqual([
			["calls", 30, 30],
			["minimum_commitment", 1, 70],
			["discount", 1, -20],
		]);
		expect(invoice.amount).toBe(80);
	});

	it("of 100 % bring an invoice to zero, never below", async () => {
		const { account, subscription, instances } = await customer({ base_fee: 5, charges: [calls(1)] });
		await applyCoupon(subscription.id, { percent_off: 100 });
		await sendActions(actions(instances[0] as string, "llm_call", 2));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(0);
		expect(invoice.status).toBe("paid");
	});
});

describe("amount-off discounts", () => {
	it("take up to the other lines' sum, and at most once per period across supplementary invoices", async () => {
		const { account, subscription, instances } = await customer({ base_fee: 10, charges: [calls(1)] });
		const code = await applyCoupon(subscription.id, { amount_off: 50, currency: "USD" });
		await sendActions(actions(instances[0] as string, "llm_call", 20));
		const regular = await generateOne(currentPeriod(), account.id);
		// 10 + 20 = 30: the 50 off takes 30, the invoice is 0.
		expect(linesOf(regular)).toEqual([
			["base_fee", 1, 10],
			["calls", 20, 20],
			["discount", 1, -30],
		]);
		expect(regular.line_items.at(-1)?.description).toBe(`${code} (USD 50.00 off)`);
		expect(regular.amount).toBe(0);

		// 30 more calls: the 20 left of the 50 go to the supplementary invoice.
		await sendActions(actions(instances[0] as string, "llm_call", 30));
		const first = await generateOne(currentPeriod(), account.id);
		expect(linesOf(first)).toEqual([
			["calls", 30, 30],
			["discount", 1, -20],
		]);
		expect(first.amount).toBe(10);

		// Nothing of the 50 is left: later usage is billed in full.
		await sendActions(actions(instances[0] as string, "llm_call", 5));
		const second = await generateOne(currentPeriod(), account.id);
		expect(linesOf(second)).toEqual([["calls", 5, 5]]);
		expect((await generate(currentPeriod(), account.id)).invoices).toEqual([]);
	});

	it("come after the minimum's top-up, which a supplementary invoice takes back once usage passes it", async () => {
		const { account, subscription, instances } = await customer({
			base_fee: 0,
			minimum_amount: 100,
			charges: [calls(1)],
		});
		await applyCoupon(subscription.id, { amount_off: 50, currency: "USD" });
		await sendActions(actions(instances[0] as string, "llm_call", 30));
		const regular = await generateOne(currentPeriod(), account.id);
		expect(linesOf(regular)).toEqual([
			["calls", 30, 30],
			["minimum_commitment", 1, 70],
			["discount", 1, -50],
		]);
		// 100 more calls: 130 passes the minimum; the 50 off were granted already.
		await sendActions(actions(instances[0] as string, "llm_call", 100));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(linesOf(supplementary)).toEqual([
			["calls", 100, 100],
			["minimum_commitment", -1, -70],
		]);
		expect(regular.amount + supplementary.amount).toBe(80);
	});

	it("do not touch a period the discount does not cover", async () => {
		const { account, subscription, instances } = await customer({ base_fee: 10, charges: [calls(1)] });
		await sendActions(actions(instances[0] as string, "llm_call", 1));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(linesOf(invoice).map(([metric]) => metric)).not.toContain("discount");
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`, { key: await sdkKey() });
		expect(usage.body.charges.map((c: { metric: string }) => c.metric)).not.toContain("discount");
	});
});
