import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";
import { actions, sendActions } from "../invoicing/fixtures";
import { thresholdCustomer, thresholdInvoices } from "./fixtures";

describe("voiding a threshold invoice", () => {
	it("judges the next crossing against the period's non-void invoices only", async () => {
		const { subscription, instance } = await thresholdCustomer(8);
		await sendActions(actions(instance, "call", 9));
		const [first] = await thresholdInvoices(subscription.id, 1);
		expect(first?.amount).toBe(9);
		const voided = await post(`/v1/invoices/${first?.id}/void`);
		expect(voided.status).toBe(200);
		expect(voided.body.status).toBe("void");
		// Nothing of the $9 is billed now: the period is over its $8 threshold again, so a new invoice bills it.
		const [, second] = await thresholdInvoices(subscription.id, 2);
		expect(second).toMatchObject({ kind: "threshold", status: "open", amount: 9 });
		expect(second?.line_items).toEqual([
			expect.objectContaining({ metric: "calls", quantity: 9, amount: 9 }),
		]);
		expect((await get(`/v1/invoices/${first?.id}`)).body.status).toBe("void");
	});
});
