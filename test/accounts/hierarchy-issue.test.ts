import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { generate } from "../invoicing/fixtures";
import { account, grant, period, remaining, subscribeFee } from "./fixtures";

// The payer and the parent's credits through the other ways an invoice is issued or undone: a draft finalized,
// a void giving credits back (docs/account-hierarchies.md).

describe("hierarchies when drafts are finalized and invoices voided", () => {
	it("a draft of a child billed to its parent is issued to the parent when finalized", async () => {
		const parent = await account({ name: "Holding" });
		const parentGrant = await grant(parent.id, 30);
		const child = await account({ parent_account_id: parent.id, billing: "parent", invoice_grace_days: 3 });
		await subscribeFee(child.id, 100);
		const { invoices } = await generate(period, child.id);
		expect(invoices[0]).toMatchObject({ status: "draft", payer_account_id: parent.id, credits_applied: 0 });
		const finalized = await post(`/v1/invoices/${invoices[0]?.id}/finalize`);
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body).toMatchObject({
			status: "open",
			account_id: child.id,
			payer_account_id: parent.id,
			credits_applied: 30,
			amount_due: 70,
			bill_to: { name: "Holding" },
		});
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
	});

	it("voiding a child's invoice gives the parent's credits back to the parent's grant", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 80);
		const child = await account({ parent_account_id: parent.id, use_parent_credits: true });
		await subscribeFee(child.id, 50);
		const [invoice] = (await generate(period, child.id)).invoices;
		expect(invoice).toMatchObject({ credits_applied: 50, status: "paid" });
		expect(await remaining(parent.id, parentGrant.id)).toBe(30);
		// A paid invoice cannot be voided: make a second, partly paid by credits, and void that one.
		await subscribeFee(child.id, 45);
		const [second] = (await generate(period, child.id)).invoices;
		expect(second).toMatchObject({ credits_applied: 30, amount_due: 15, status: "open" });
		const voided = await post(`/v1/invoices/${second?.id}/void`);
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(await remaining(parent.id, parentGrant.id)).toBe(30);
		const reversal = await env.DB.prepare(
			"SELECT account_id, amount_minor FROM credit_ledger WHERE invoice_id = ?1 AND kind = 'reversal'",
		)
			.bind(second?.id)
			.all();
		expect(reversal.results).toEqual([{ account_id: parent.id, amount_minor: 3000 }]);
	});
});
