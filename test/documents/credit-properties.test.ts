import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CreditWallet, type SpendableGrant, spendingOrder } from "../../src/credits/wallet";
import { createAccount, get, post } from "../helpers";
import { createPlan, currentPeriod, instanceKey, subscribe } from "../invoicing/fixtures";

// Properties of prepaid credits (§17): whatever the grants and invoices, credits never make amount_due negative,
// never take more from a grant than it holds, and a grant's ledger adds up to what it has left.
const grantArbitrary = fc.record({
	id: fc.uuid(),
	accountId: fc.constantFrom("acct_a", "acct_b"),
	remainingMinor: fc.bigInt({ min: 0n, max: 10n ** 17n }),
	expiresAt: fc.option(
		fc
			.integer({ min: 0, max: 1000 })
			.map((d) => new Date(Date.UTC(2030, 0, 1) + d * 3_600_000).toISOString()),
	),
	createdAt: fc
		.integer({ min: 0, max: 1000 })
		.map((d) => new Date(Date.UTC(2026, 0, 1) + d * 1000).toISOString()),
});
const invoiceArbitrary = fc.record({
	accountId: fc.constantFrom("acct_a", "acct_b"),
	amountMinor: fc.bigInt({ min: -(10n ** 6n), max: 10n ** 17n }),
});

describe("credit planning (properties)", () => {
	it("never applies more than an invoice's amount nor more than a grant holds, and spends all it can", () => {
		fc.assert(
			fc.property(
				fc.array(grantArbitrary, { maxLength: 8 }),
				fc.array(invoiceArbitrary, { maxLength: 8 }),
				(grants, invoices) => {
					const wallet = new CreditWallet(grants as SpendableGrant[]);
					const taken = new Map<string, bigint>();
					for (const invoice of invoices) {
						const before = wallet.available(invoice.accountId);
						const applications = wallet.spend(invoice.accountId, invoice.amountMinor);
						const applied = applications.reduce((sum, a) => sum + a.amountMinor, 0n);
						// amount_due = amount − applied is never negative, and never below what a positive amount leaves.
						expect(applied >= 0n).toBe(true);
						if (invoice.amountMinor <= 0n) expect(applied).toBe(0n);
						else expect(invoice.amountMinor - applied >= 0n).toBe(true);
						// Greedy: everything the account had, up to the amount.
						let expected = invoice.amountMinor <= 0n ? 0n : invoice.amountMinor;
						if (before < expected) expected = before;
						expect(applied).toBe(expected);
						for (const a of applications) {
							expect(a.amountMinor > 0n).toBe(true);
							taken.set(a.grantId, (taken.get(a.grantId) ?? 0n) + a.amountMinor);
						}
					}
					for (const grant of grants) {
						expect((taken.get(grant.id) ?? 0n) <= grant.remainingMinor).toBe(true);
					}
				},
			),
			{ numRuns: 300 },
		);
	});

	it("spends a later-expiring grant only once every earlier one of the account is empty", () => {
		fc.assert(
			fc.property(
				fc.array(grantArbitrary, { maxLength: 8 }),
				fc.bigInt({ min: 1n, max: 10n ** 17n }),
				(grants, amount) => {
					const mine = grants
						.filter((g) => g.accountId === "acct_a" && g.remainingMinor > 0n)
						.sort(spendingOrder);
					const applications = new CreditWallet(grants as SpendableGrant[]).spend("acct_a", amount);
					// The grants used are a prefix of the spending order, each emptied but perhaps the last.
					expect(applications.map((a) => a.grantId)).toEqual(
						mine.slice(0, applications.length).map((g) => g.id),
					);
					applications.slice(0, -1).forEach((a, i) => {
						expect(a.amountMinor).toBe(mine[i]?.remainingMinor);
					});
				},
			),
			{ numRuns: 300 },
		);
	});
});

describe("the credit ledger (properties, in D1)", () => {
	it("adds up to each grant's remaining, and grants + credits applied to live invoices = what was granted", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.integer({ min: 1, max: 500_00 }), { minLength: 1, maxLength: 3 }),
				fc.array(fc.record({ cents: fc.integer({ min: 0, max: 400_00 }), voided: fc.boolean() }), {
					minLength: 1,
					maxLength: 4,
				}),
				async (grantCents, invoices) => {
					const account = await createAccount();
					const grantIds: string[] = [];
					for (const cents of grantCents) {
						const response = await post(`/v1/accounts/${account.id}/credit-grants`, { amount: cents / 100 });
						grantIds.push(response.body.id);
					}
					for (const { cents, voided } of invoices) {
						const plan = await createPlan({ base_fee: cents / 100, charges: [] });
						await subscribe(account.id, plan.id, [instanceKey()]);
						const generated = await post("/v1/invoices/generate", {
							billing_period: currentPeriod(),
							account_id: account.id,
						});
						const [invoice] = generated.body.invoices;
						expect(invoice.amount_due).toBeGreaterThanOrEqual(0);
						expect(invoice.credits_applied).toBeLessThanOrEqual(invoice.amount);
						if (voided && invoice.status === "open") await post(`/v1/invoices/${invoice.id}/void`);
					}
					const listed = await env.DB.prepare(
						"SELECT g.id, CAST(g.amount AS REAL) * 100 AS granted, (SELECT SUM(amount_minor) FROM credit_ledger l WHERE l.grant_id = g.id) AS ledger FROM credit_grants g WHERE g.account_id = ?1",
					)
						.bind(account.id)
						.all<{ id: string; granted: number; ledger: number }>();
					const grants = (await get(`/v1/accounts/${account.id}/credit-grants?limit=100`)).body
						.credit_grants as { id: string; remaining: number }[];
					for (const row of listed.results) {
						const remaining = grants.find((g) => g.id === row.id)?.remaining ?? -1;
						expect(Math.round(remaining * 100)).toBe(row.ledger);
						expect(row.ledger).toBeGreaterThanOrEqual(0);
					}
					const live = await env.DB.prepare(
						"SELECT COALESCE(SUM(ROUND(CAST(credits_applied AS REAL) * 100)), 0) AS applied FROM invoices WHERE account_id = ?1 AND status != 'void'",
					)
						.bind(account.id)
						.first<{ applied: number }>();
					const remainingCents = listed.results.reduce((sum, row) => sum + row.ledger, 0);
					const grantedCents = grantCents.reduce((sum, cents) => sum + cents, 0);
					expect(remainingCents + (live?.applied ?? 0)).toBe(grantedCents);
				},
			),
			{ numRuns: 6 },
		);
	});
});
