/**
 * Black-box checks of §36 at its edges: whose grants pay in which currency, voids giving credits back across the
 * hierarchy, the statement's default currency, revenue by parent in another currency, and the OpenAPI document.
 */
import { describe, expect, it } from "vitest";
import { createAccount, get, post } from "../helpers";
import { createPlan, generateOne } from "../invoicing/fixtures";
import { calls, exchangeRate, grant, PERIOD, perCall, RANGE, subscription } from "./billing-fixtures";

async function child(parentId: string, fields: Record<string, unknown>, amount: number, currency = "USD") {
	const acct = await createAccount(undefined, { parent_account_id: parentId, ...fields });
	const plan = await createPlan({ currency: "USD", charges: [perCall(amount)] });
	const sub = await subscription(acct.id, plan.id, { billing_currency: currency });
	await calls(sub.instance, 1);
	return acct;
}

const remaining = async (accountId: string, grantId: string) =>
	(await get(`/v1/accounts/${accountId}/credit-grants?limit=100`)).body.credit_grants.find(
		(g: { id: string }) => g.id === grantId,
	)?.remaining;

describe("the parent's grants and currencies", () => {
	it("pay a child's invoice only with grants in the invoice's currency", async () => {
		await exchangeRate("USD", "QAR", 3.64);
		const parent = await createAccount();
		const dollars = await grant(parent.id, 1000);
		const riyals = await grant(parent.id, 5, { currency: "QAR" });
		const shared = await child(parent.id, { use_parent_credits: true }, 10, "QAR");
		const payedFor = await child(parent.id, { billing: "parent" }, 10, "QAR");
		// 10.00 USD × 3.64 = 36.40 QAR each; the 5 QAR grant pays the first, the USD grant neither
		const first = await generateOne(PERIOD, shared.id);
		expect(first).toMatchObject({ currency: "QAR", amount: 36.4, credits_applied: 5, amount_due: 31.4 });
		const second = await generateOne(PERIOD, payedFor.id);
		expect(second).toMatchObject({ currency: "QAR", amount: 36.4, credits_applied: 0, amount_due: 36.4 });
		expect(await remaining(parent.id, dollars.id)).toBe(1000);
		expect(await remaining(parent.id, riyals.id)).toBe(0);
	});

	it("get their credits back when the child's invoice is voided", async () => {
		const parent = await createAccount();
		const parentGrant = await grant(parent.id, 200);
		const payedFor = await child(parent.id, { billing: "parent" }, 500);
		const inv = await generateOne(PERIOD, payedFor.id);
		expect(inv).toMatchObject({ credits_applied: 200, amount_due: 300 });
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
		expect((await post(`/v1/invoices/${inv.id}/void`, {})).status).toBe(200);
		expect(await remaining(parent.id, parentGrant.id)).toBe(200);

		const shared = await child(parent.id, { use_parent_credits: true }, 250);
		const own = await grant(shared.id, 100);
		const second = await generateOne(PERIOD, shared.id);
		expect(second).toMatchObject({ credits_applied: 250, amount_due: 0 });
		expect([await remaining(shared.id, own.id), await remaining(parent.id, parentGrant.id)]).toEqual([0, 50]);
	});
});

describe("the statement and revenue in other currencies", () => {
	it("default to the account's currency and keep currencies apart", async () => {
		await exchangeRate("USD", "EUR", 0.9);
		const parent = await createAccount(undefined, { currency: "EUR", name: "Holding EU" });
		const payedFor = await child(parent.id, { billing: "parent" }, 20, "EUR");
		const inDollars = await child(parent.id, { billing: "parent" }, 7);
		const a = await generateOne(PERIOD, payedFor.id);
		const b = await generateOne(PERIOD, inDollars.id);
		const statement = (await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}`)).body;
		// 20.00 USD × 0.9 = 18.00 EUR
		expect(statement).toMatchObject({ currency: "EUR", invoices: [a.id], amount: 18 });
		const usd = (await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}&currency=USD`)).body;
		expect(usd).toMatchObject({ currency: "USD", invoices: [b.id], amount: 7 });

		const row = async (currency: string) =>
			(
				await get(`/v1/reports/revenue?${RANGE}&group_by=parent_account&currency=${currency}`)
			).body.breakdown.find((r: { id: string }) => r.id === parent.id);
		expect(await row("EUR")).toEqual({ id: parent.id, name: "Holding EU", revenue: 18 });
		expect(await row("USD")).toEqual({ id: parent.id, name: "Holding EU", revenue: 7 });
	});
});

describe("the OpenAPI document", () => {
	it("describes exchange rates, the statement and the new fields", async () => {
		const doc = (await get("/v1/openapi.json", { key: null })).body;
		const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
		expect(methods("/v1/exchange-rates")).toEqual(["get", "post"]);
		expect(methods("/v1/accounts/{account_id}/statement")).toEqual(["get"]);
		const invoiceParams = doc.paths["/v1/invoices"].get.parameters.map((p: { name: string }) => p.name);
		expect(invoiceParams).toContain("payer_account_id");
		const schemas = JSON.stringify(doc.components.schemas);
		for (const field of [
			"billing_currency",
			"exchange_rate",
			"original_amount",
			"original_currency",
			"payer_account_id",
			"parent_account_id",
			"use_parent_credits",
		])
			expect(schemas, field).toContain(field);
		const revenue = JSON.stringify(doc.paths["/v1/reports/revenue"].get.parameters);
		expect(revenue).toContain("parent_account");
	});
});

describe("drafts and the payer", () => {
	it("a child's draft billed to its parent takes the parent's credits when finalized", async () => {
		const parent = await createAccount();
		const parentGrant = await grant(parent.id, 50);
		const payedFor = await child(parent.id, { billing: "parent", invoice_grace_days: 2 }, 80);
		const draft = await generateOne(PERIOD, payedFor.id);
		expect(draft).toMatchObject({ status: "draft", credits_applied: 0, payer_account_id: parent.id });
		expect(await remaining(parent.id, parentGrant.id)).toBe(50);
		const finalized = await post(`/v1/invoices/${draft.id}/finalize`, {});
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body).toMatchObject({ status: "open", credits_applied: 50, amount_due: 30 });
		expect(await remaining(parent.id, parentGrant.id)).toBe(0);
	});
});
