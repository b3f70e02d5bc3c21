import { describe, expect, it } from "vitest";
import { expectError, get, patch, post } from "../helpers";
import { actions, currentPeriod, generate, sendActions } from "../invoicing/fixtures";
import { thresholdCustomer, thresholdInvoices } from "./fixtures";

describe("a draft regular invoice after threshold invoices", () => {
	it("grants what its discount could not take when it is finalized, once", async () => {
		const { subscription, instance, account } = await thresholdCustomer(8);
		const graced = await patch(`/v1/accounts/${account.id}`, { invoice_grace_days: 3 });
		expect(graced.status, JSON.stringify(graced.body)).toBe(200);
		const code = `DRF${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
		const coupon = await post("/v1/coupons", { code, amount_off: 25, currency: "USD", duration: "once" });
		expect(coupon.status, JSON.stringify(coupon.body)).toBe(201);
		expect((await post(`/v1/subscriptions/${subscription.id}/discounts`, { code })).status).toBe(201);
		// 12 calls: $11, billed by a threshold invoice. The period: $10 base + $11, $21 off; $11 left over.
		await sendActions(actions(instance, "call", 12));
		const [threshold] = await thresholdInvoices(subscription.id, 1);
		expect(threshold?.amount).toBe(11);
		const [draft] = (await generate(currentPeriod(), account.id)).invoices;
		expect(draft).toMatchObject({ kind: "regular", status: "draft", amount: 0 });
		expect((await get(`/v1/accounts/${account.id}/credit-grants`)).body.total).toBe(0);

		const finalized = await post(`/v1/invoices/${draft?.id}/finalize`);
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body.status).not.toBe("draft");
		const grants = await get(`/v1/accounts/${account.id}/credit-grants`);
		expect(grants.body.credit_grants).toEqual([
			expect.objectContaining({
				amount: 11,
				remaining: 11,
				description: `${code} discount, ${currentPeriod()}`,
			}),
		]);
		// Finalizing again is refused and grants nothing more; generating again bills and grants nothing.
		expectError(await post(`/v1/invoices/${draft?.id}/finalize`), 409, "conflict");
		expect((await generate(currentPeriod(), account.id)).invoices).toEqual([]);
		expect((await get(`/v1/accounts/${account.id}/credit-grants`)).body.total).toBe(1);
	});
});
