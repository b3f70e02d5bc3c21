/**
 * The upcoming invoice of a child account (docs/account-hierarchies.md) shows the terms issuing would give it:
 * under billing "parent" the parent's bill-to, net terms and credits; with use_parent_credits the child's own
 * grants first, then the parent's. Nothing is spent.
 */
import { describe, expect, it } from "vitest";
import { get, patch } from "../helpers";
import { account, grant, remaining, subscribeFee } from "./fixtures";

async function upcoming(subscriptionId: string) {
	const response = await get(`/v1/invoices/upcoming?subscription_id=${subscriptionId}`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as Record<string, any>;
}

const daysAfter = (issuedAt: string, dueAt: string) =>
	(Date.parse(dueAt) - Date.parse(issuedAt)) / 86_400_000;

describe("GET /v1/invoices/upcoming in a hierarchy", () => {
	it("billing parent: the parent's bill-to, net terms and credits, the child's own grants unused", async () => {
		const parent = await account({ net_terms_days: 45 });
		const parentGrant = await grant(parent.id, 120);
		const child = await account({ parent_account_id: parent.id, billing: "parent" });
		const own = await grant(child.id, 500);
		const subscription = await subscribeFee(child.id, 200);
		const invoice = await upcoming(subscription.id);
		expect(invoice).toMatchObject({
			id: null,
			account_id: child.id,
			payer_account_id: parent.id,
			amount: 200,
			credits_applied: 120,
			amount_due: 80,
			status: "open",
		});
		expect(invoice.bill_to).toMatchObject({ name: parent.name, email: parent.email });
		expect(daysAfter(invoice.issued_at, invoice.due_at)).toBe(45);
		// Read only: no grant was spent.
		expect(await remaining(parent.id, parentGrant.id)).toBe(120);
		expect(await remaining(child.id, own.id)).toBe(500);
	});

	it("use_parent_credits: the child's own grants first, then the parent's, billed to the child", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 1000);
		const child = await account({ parent_account_id: parent.id, use_parent_credits: true });
		const own = await grant(child.id, 100);
		const subscription = await subscribeFee(child.id, 300);
		const invoice = await upcoming(subscription.id);
		expect(invoice).toMatchObject({
			account_id: child.id,
			payer_account_id: child.id,
			amount: 300,
			credits_applied: 300,
			amount_due: 0,
			status: "paid",
		});
		expect(invoice.bill_to).toMatchObject({ name: child.name });
		expect(await remaining(child.id, own.id)).toBe(100);
		expect(await remaining(parent.id, parentGrant.id)).toBe(1000);

		// Without the flag the parent's grants do not count.
		expect((await patch(`/v1/accounts/${child.id}`, { use_parent_credits: false })).status).toBe(200);
		expect(await upcoming(subscription.id)).toMatchObject({ credits_applied: 100, amount_due: 200 });
	});
});
