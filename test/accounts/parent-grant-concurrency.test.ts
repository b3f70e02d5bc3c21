/**
 * A parent's grant drawn at the same moment by several children's invoices (docs/account-hierarchies.md) is never
 * overdrawn, whether the children are billed to the parent or share its credits; the same under both at once.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generate } from "../invoicing/fixtures";
import { account, grant, period, remaining, subscribeFee } from "./fixtures";

const ledgerSum = async (grantId: string) =>
	(
		await env.DB.prepare("SELECT SUM(amount_minor) AS left FROM credit_ledger WHERE grant_id = ?1")
			.bind(grantId)
			.first<{ left: number }>()
	)?.left;

describe("one parent grant, several children's invoices at once", () => {
	it("billing parent and use_parent_credits children together draw exactly the grant", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 3000);
		const children = await Promise.all([
			account({ parent_account_id: parent.id, billing: "parent" }),
			account({ parent_account_id: parent.id, billing: "parent" }),
			account({ parent_account_id: parent.id, use_parent_credits: true }),
			account({ parent_account_id: parent.id, use_parent_credits: true }),
		]);
		for (const child of children) await subscribeFee(child.id, 1000);
		const results = await Promise.all(children.map((child) => generate(period, child.id)));
		const invoices = results.flatMap((result) => result.invoices);
		expect(invoices).toHaveLength(4);
		expect(invoices.reduce((sum, invoice) => sum + invoice.credits_applied, 0)).toBe(3000);
		expect(invoices.reduce((sum, invoice) => sum + invoice.amount_due, 0)).toBe(1000);
		for (const invoice of invoices) expect(invoice.credits_applied).toBeGreaterThanOrEqual(0);
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
		expect(await ledgerSum(parentGrant.id)).toBe(0);
	});
});
