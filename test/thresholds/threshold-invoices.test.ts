import { describe, expect, it } from "vitest";
import { expectError, get, patch, post } from "../helpers";
import { actions, currentPeriod, generate, sendActions } from "../invoicing/fixtures";
import { invoicesOf, TIERED_PLAN, thresholdCustomer, thresholdInvoices } from "./fixtures";

describe("invoicing_threshold on subscriptions", () => {
	it("is stored on create and changed by PATCH", async () => {
		const { subscription } = await thresholdCustomer(25.5);
		const read = await get(`/v1/subscriptions/${subscription.id}`);
		expect(read.body.invoicing_threshold).toBe(25.5);
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, { invoicing_threshold: 40 });
		expect(changed.status).toBe(200);
		expect(changed.body.invoicing_threshold).toBe(40);
		const cleared = await patch(`/v1/subscriptions/${subscription.id}`, { invoicing_threshold: null });
		expect(cleared.body.invoicing_threshold).toBeNull();
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.invoicing_threshold).toBeNull();
	});

	it("defaults to null", async () => {
		const { subscription } = await thresholdCustomer(null);
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.invoicing_threshold).toBeNull();
	});

	it.each([0, -5, "10", 1e16, 0.0000000000001])("refuses %s with 400, nothing stored", async (bad) => {
		const { subscription, account, plan, instance } = await thresholdCustomer(30);
		const refused = await patch(`/v1/subscriptions/${subscription.id}`, { invoicing_threshold: bad });
		expectError(refused, 400, "validation_error");
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.invoicing_threshold).toBe(30);
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [`${instance}-other`],
			invoicing_threshold: bad,
		});
		expectError(created, 400, "validation_error");
		const listed = await get(`/v1/subscriptions?account_id=${account.id}`);
		expect(listed.body.total).toBe(1);
	});
});

describe("threshold invoices", () => {
	it("bills the period's usage so far once it reaches the threshold, tiers never restarting", async () => {
		const { subscription, instance, account } = await thresholdCustomer(8);
		await sendActions(actions(instance, "call", 5));
		// $5 so far: below the threshold of $8.
		await sendActions(actions(instance, "call", 4));
		const [first] = await thresholdInvoices(subscription.id, 1);
		expect(first?.amount).toBe(9);
		expect(first?.line_items).toEqual([expect.objectContaining({ metric: "calls", quantity: 9, amount: 9 })]);
		// 9 + 16 = 25 calls: 10 × $1 + 15 × $0.50 = $17.50 in all, $8.50 of it not invoiced yet.
		await sendActions(actions(instance, "call", 16));
		const invoices = await thresholdInvoices(subscription.id, 2);
		expect(invoices[1]?.amount).toBe(8.5);
		expect(invoices[1]?.line_items[0]).toMatchObject({ metric: "calls", quantity: 16, amount: 8.5 });
		// The regular invoice bills the base fee and nothing of the usage twice.
		const [regular] = (await generate(currentPeriod(), account.id)).invoices;
		expect(regular).toMatchObject({ kind: "regular", amount: 10 });
		expect(regular?.line_items.find((line) => line.metric === "calls")?.amount).toBe(0);
	});

	it("makes one invoice for a jump over several multiples", async () => {
		const { subscription, instance } = await thresholdCustomer(2);
		await sendActions(actions(instance, "call", 9));
		const [only] = await thresholdInvoices(subscription.id, 1);
		expect(only?.amount).toBe(9);
		await new Promise((resolve) => setTimeout(resolve, 3000));
		expect((await invoicesOf(subscription.id)).length).toBe(1);
	});
});

describe("the regular invoice after threshold invoices", () => {
	it("takes the whole period's discount up to its other lines and grants the rest as a credit", async () => {
		const { subscription, instance, account } = await thresholdCustomer(8);
		const code = `THR${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
		const coupon = await post("/v1/coupons", { code, amount_off: 25, currency: "USD", duration: "once" });
		expect(coupon.status, JSON.stringify(coupon.body)).toBe(201);
		const applied = await post(`/v1/subscriptions/${subscription.id}/discounts`, { code });
		expect(applied.status, JSON.stringify(applied.body)).toBe(201);
		// 12 calls: 10 × $1 + 2 × $0.50 = $11, all billed by one threshold invoice (no discount on it).
		await sendActions(actions(instance, "call", 12));
		const [threshold] = await thresholdInvoices(subscription.id, 1);
		expect(threshold?.amount).toBe(11);
		expect(threshold?.line_items.map((line) => line.metric)).toEqual(["calls"]);
		// The period: $10 base fee + $11 usage, $21 off (an amount off takes at most the period's sum). The regular
		// invoice: $10 − $10; the $11 it cannot take becomes credit.
		const [regular] = (await generate(currentPeriod(), account.id)).invoices;
		expect(regular?.amount).toBe(0);
		expect(regular?.line_items.find((line) => line.metric === "discount")?.amount).toBe(-10);
		const grants = await get(`/v1/accounts/${account.id}/credit-grants`);
		expect(grants.body.credit_grants).toEqual([
			expect.objectContaining({
				amount: 11,
				remaining: 11,
				description: `${code} discount, ${currentPeriod()}`,
			}),
		]);
		// Generating again bills nothing more and grants nothing more.
		expect((await generate(currentPeriod(), account.id)).invoices).toEqual([]);
		expect((await get(`/v1/accounts/${account.id}/credit-grants`)).body.total).toBe(1);
	});

	it("bills what a threshold invoice left with the minimum on the whole period", async () => {
		const { subscription, instance, account } = await thresholdCustomer(5, {
			...TIERED_PLAN,
			minimum_amount: 30,
		});
		await sendActions(actions(instance, "call", 6));
		const [threshold] = await thresholdInvoices(subscription.id, 1);
		expect(threshold?.amount).toBe(6);
		// Base $10 + usage $6 = $16 < $30: a top-up of $14; the regular invoice is $10 + $0 + $14.
		const [regular] = (await generate(currentPeriod(), account.id)).invoices;
		expect(regular?.amount).toBe(24);
		expect((threshold?.amount ?? 0) + (regular?.amount ?? 0)).toBe(30);
	});
});
