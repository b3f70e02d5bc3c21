import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectError, get } from "../helpers";
import { generate } from "../invoicing/fixtures";
import { mint } from "../portal/fixtures";
import { account, grant, invoiceNow, period, remaining, subscribeFee } from "./fixtures";

// Parent pays and shared credits (docs/account-hierarchies.md), with the contract's two worked examples.

const ledgerOf = async (grantId: string) =>
	(
		await env.DB.prepare(
			"SELECT account_id, kind, amount_minor, invoice_id FROM credit_ledger WHERE grant_id = ?1 AND kind = 'application' ORDER BY created_at",
		)
			.bind(grantId)
			.all<{ account_id: string; kind: string; amount_minor: number; invoice_id: string }>()
	).results;

describe("use_parent_credits: the child's grants first, then the parent's", () => {
	it("worked example 1: a $10,000 parent grant, two children of $4,000, then $3,000 more leaves $1,000 due", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 10_000);
		const a = await account({ parent_account_id: parent.id, use_parent_credits: true });
		const b = await account({ parent_account_id: parent.id, use_parent_credits: true });
		await subscribeFee(a.id, 4000);
		await subscribeFee(b.id, 4000);
		const first = await invoiceNow(a.id);
		const second = await invoiceNow(b.id);
		for (const [invoice, child] of [
			[first, a],
			[second, b],
		] as const) {
			expect(invoice).toMatchObject({
				account_id: child.id,
				payer_account_id: child.id,
				amount: 4000,
				credits_applied: 4000,
				amount_due: 0,
				status: "paid",
			});
			expect(invoice.bill_to).toMatchObject({ name: child.name });
		}
		expect(await remaining(parent.id, parentGrant.id)).toBe(2000);
		await subscribeFee(a.id, 3000);
		const third = await invoiceNow(a.id);
		expect(third).toMatchObject({
			account_id: a.id,
			payer_account_id: a.id,
			amount: 3000,
			credits_applied: 2000,
			amount_due: 1000,
			amount_remaining: 1000,
			status: "open",
		});
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
		// The parent's grant paid $10,000 in all; each application is written under the grant's owner.
		const rows = await ledgerOf(parentGrant.id);
		expect(rows.reduce((sum, row) => sum - row.amount_minor, 0)).toBe(1_000_000);
		expect(new Set(rows.map((row) => row.account_id))).toEqual(new Set([parent.id]));
		expect(rows.map((row) => row.invoice_id).sort()).toEqual([first.id, second.id, third.id].sort());
	});

	it("the child's own grant pays first, the parent's the rest; without the flag the parent's is untouched", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 1000);
		const child = await account({ parent_account_id: parent.id, use_parent_credits: true });
		const own = await grant(child.id, 100);
		await subscribeFee(child.id, 300);
		const invoice = await invoiceNow(child.id);
		expect(invoice).toMatchObject({ amount: 300, credits_applied: 300, amount_due: 0, status: "paid" });
		expect(await remaining(child.id, own.id)).toBe(0);
		expect(await remaining(parent.id, parentGrant.id)).toBe(800);

		const loner = await account({ parent_account_id: parent.id });
		await subscribeFee(loner.id, 50);
		expect(await invoiceNow(loner.id)).toMatchObject({ credits_applied: 0, amount_due: 50 });
		expect(await remaining(parent.id, parentGrant.id)).toBe(800);
	});

	it("only the parent's grants in the invoice's currency pay it", async () => {
		const parent = await account();
		// A EUR grant, stored as a grant create stores it (grant rows and their opening ledger row).
		const euros = `cgr_eur${crypto.randomUUID().replaceAll("-", "").slice(0, 19)}`;
		const now = new Date().toISOString();
		await env.DB.batch([
			env.DB.prepare(
				"INSERT INTO credit_grants (id, environment, account_id, amount, currency, created_at) VALUES (?1, 'live', ?2, '500', 'EUR', ?3)",
			).bind(euros, parent.id, now),
			env.DB.prepare(
				"INSERT INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, created_at) VALUES (?1, 'live', ?2, ?3, 'grant', 50000, ?4)",
			).bind(`cle_${euros}`, euros, parent.id, now),
		]);
		const child = await account({ parent_account_id: parent.id, use_parent_credits: true });
		await subscribeFee(child.id, 40);
		expect(await invoiceNow(child.id)).toMatchObject({ currency: "USD", credits_applied: 0, amount_due: 40 });
		expect(await remaining(parent.id, euros)).toBe(500);
	});

	it("two children's invoices generated at the same moment never overdraw the parent's grant", async () => {
		const parent = await account();
		const parentGrant = await grant(parent.id, 5000);
		const children = await Promise.all([
			account({ parent_account_id: parent.id, use_parent_credits: true }),
			account({ parent_account_id: parent.id, use_parent_credits: true }),
			account({ parent_account_id: parent.id, use_parent_credits: true }),
		]);
		for (const child of children) await subscribeFee(child.id, 4000);
		const results = await Promise.all(children.map((child) => generate(period, child.id)));
		const invoices = results.flatMap((result) => result.invoices);
		expect(invoices).toHaveLength(3);
		const applied = invoices.reduce((sum, invoice) => sum + invoice.credits_applied, 0);
		expect(applied).toBe(5000);
		expect(invoices.reduce((sum, invoice) => sum + invoice.amount_due, 0)).toBe(12_000 - 5000);
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
		const sum = await env.DB.prepare(
			"SELECT SUM(amount_minor) AS left FROM credit_ledger WHERE grant_id = ?1",
		)
			.bind(parentGrant.id)
			.first<{ left: number }>();
		expect(sum?.left).toBe(0);
	});
});

describe("billing parent: the parent is billed and pays, the invoice stays the child's", () => {
	it("worked example 2: the child's $500 invoice is paid from the parent's $200 grant, $300 due from the parent", async () => {
		const parent = await account({ email: "ap@holding.test" });
		const parentGrant = await grant(parent.id, 200);
		const child = await account({ parent_account_id: parent.id, billing: "parent" });
		const childGrant = await grant(child.id, 75);
		await subscribeFee(child.id, 500);
		const invoice = await invoiceNow(child.id);
		expect(invoice).toMatchObject({
			account_id: child.id,
			payer_account_id: parent.id,
			amount: 500,
			credits_applied: 200,
			amount_due: 300,
			amount_remaining: 300,
			status: "open",
			bill_to: { name: parent.name, email: "ap@holding.test" },
		});
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
		expect(await remaining(child.id, childGrant.id)).toBe(75);
		const row = await env.DB.prepare("SELECT account_id, payer_account_id FROM invoices WHERE id = ?1")
			.bind(invoice.id)
			.first();
		expect(row).toEqual({ account_id: child.id, payer_account_id: parent.id });

		// What the parent pays, listed and summed.
		const paid = await get(`/v1/invoices?payer_account_id=${parent.id}`);
		expect(paid.body).toMatchObject({ total: 1, invoices: [{ id: invoice.id }] });
		expect((await get(`/v1/invoices?account_id=${parent.id}`)).body.total).toBe(0);
		const statement = await get(`/v1/accounts/${parent.id}/statement?billing_period=${period}`);
		expect(statement.status, JSON.stringify(statement.body)).toBe(200);
		expect(statement.body).toEqual({
			account_id: parent.id,
			billing_period: period,
			currency: "USD",
			invoices: [invoice.id],
			amount: 500,
			credits_applied: 200,
			amount_due: 300,
			amount_paid: 0,
			amount_remaining: 300,
		});
		const childStatement = await get(`/v1/accounts/${child.id}/statement?billing_period=${period}`);
		expect(childStatement.body).toMatchObject({ invoices: [], amount: 0, amount_due: 0 });

		// The parent's portal shows it; the child's still does too.
		const session = await mint(parent.id);
		const portal = await call("GET", "/portal/api/invoices", { key: session.token });
		expect(portal.status).toBe(200);
		expect(portal.body.invoices.map((i: { id: string }) => i.id)).toEqual([invoice.id]);
		const one = await call("GET", `/portal/api/invoices/${invoice.id}`, { key: session.token });
		expect(one.status).toBe(200);
		const stranger = await mint((await account()).id);
		expect((await call("GET", `/portal/api/invoices/${invoice.id}`, { key: stranger.token })).status).toBe(
			404,
		);
	});

	it("the statement sums the parent's own invoices and its children's, in one currency", async () => {
		const parent = await account();
		const child = await account({ parent_account_id: parent.id, billing: "parent" });
		await subscribeFee(parent.id, 120.5);
		await subscribeFee(child.id, 79.25);
		const own = await invoiceNow(parent.id);
		const childs = await invoiceNow(child.id);
		await call("POST", `/v1/invoices/${own.id}/pay`, { body: {} });
		const statement = await get(`/v1/accounts/${parent.id}/statement?billing_period=${period}&currency=USD`);
		expect(statement.body).toMatchObject({
			invoices: [own.id, childs.id],
			amount: 199.75,
			credits_applied: 0,
			amount_due: 199.75,
			amount_paid: 120.5,
			amount_remaining: 79.25,
		});
		const euros = await get(`/v1/accounts/${parent.id}/statement?billing_period=${period}&currency=EUR`);
		expect(euros.body).toMatchObject({ currency: "EUR", invoices: [], amount: 0 });
	});

	it("statement errors: a missing or malformed period, a bad currency, an unknown account", async () => {
		const parent = await account();
		expectError(await get(`/v1/accounts/${parent.id}/statement`), 400, "validation_error");
		expectError(
			await get(`/v1/accounts/${parent.id}/statement?billing_period=2026-13`),
			400,
			"validation_error",
		);
		expectError(
			await get(`/v1/accounts/${parent.id}/statement?billing_period=${period}&currency=usd`),
			400,
			"validation_error",
		);
		expectError(await get(`/v1/accounts/acct_nope/statement?billing_period=${period}`), 404, "not_found");
	});
});
