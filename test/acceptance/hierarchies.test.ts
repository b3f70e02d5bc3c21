/**
 * Black-box checks of account hierarchies (CONTRACT §36, with §8, §10, §12, §17, §28): the rules of two levels,
 * both worked examples to the cent, the statement, the payer filter, revenue by parent account, and shared credits
 * drawn by two children at the same instant.
 */
import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";
import { createPlan, generate, generateOne, invoicesOf, shiftPeriod } from "../invoicing/fixtures";
import {
	calls,
	exchangeRate,
	grant,
	invoice,
	PERIOD,
	perCall,
	RANGE,
	subscription,
} from "./billing-fixtures";

/** An account of `fields` subscribed to a plan of `unitPrice` USD per call, billed in `currency`, with `count` calls. */
async function consumer(fields: Record<string, unknown>, unitPrice: number, count: number, currency = "USD") {
	const name = `Acct ${crypto.randomUUID().slice(0, 6)}`;
	const acct = await createAccount(undefined, { name, ...fields });
	const plan = await createPlan({ currency: "USD", charges: [perCall(unitPrice)] });
	const sub = await subscription(acct.id, plan.id, { billing_currency: currency });
	if (count > 0) await calls(sub.instance, count);
	return { id: acct.id, name, instance: sub.instance };
}

const grantOf = async (accountId: string, grantId: string) =>
	(await get(`/v1/accounts/${accountId}/credit-grants?limit=100`)).body.credit_grants.find(
		(g: { id: string }) => g.id === grantId,
	);

describe("the hierarchy's fields and rules", () => {
	it("default to no parent, billing self, no parent credits; are set on create and PATCH", async () => {
		const parent = await createAccount();
		expect(parent).toMatchObject({ parent_account_id: null, billing: "self", use_parent_credits: false });
		const child = await createAccount(undefined, { parent_account_id: parent.id, billing: "parent" });
		expect(child).toMatchObject({
			parent_account_id: parent.id,
			billing: "parent",
			use_parent_credits: false,
		});
		expect((await get(`/v1/accounts/${child.id}`)).body).toEqual(child);

		const other = await createAccount();
		const moved = await patch(`/v1/accounts/${child.id}`, {
			parent_account_id: other.id,
			billing: "self",
			use_parent_credits: true,
		});
		expect(moved.status, JSON.stringify(moved.body)).toBe(200);
		expect(moved.body).toMatchObject({
			parent_account_id: other.id,
			billing: "self",
			use_parent_credits: true,
		});
		const freed = await patch(`/v1/accounts/${child.id}`, { parent_account_id: null });
		expect(freed.status, JSON.stringify(freed.body)).toBe(200);
		expect(freed.body.parent_account_id).toBeNull();
	});

	it("refuse on create a parent that is unknown, of the other environment, or itself a child, and billing parent alone", async () => {
		const top = await createAccount();
		const middle = await createAccount(undefined, { parent_account_id: top.id });
		const testKey = await createKey("admin", "test");
		const elsewhere = await createAccount(testKey);
		const before = (await get("/v1/accounts?limit=1")).body.total;
		for (const fields of [
			{ parent_account_id: "acct_unknown" },
			{ parent_account_id: elsewhere.id },
			{ parent_account_id: middle.id },
			{ billing: "parent" },
		]) {
			expectError(
				await post("/v1/accounts", { name: "Refused", email: "x@acme.test", ...fields }),
				409,
				"conflict",
			);
		}
		expectError(
			await post(
				"/v1/accounts",
				{ name: "T", email: "t@acme.test", parent_account_id: top.id },
				{ key: testKey },
			),
			409,
			"conflict",
		);
		expect((await get("/v1/accounts?limit=1")).body.total).toBe(before);
	});

	it("refuse on PATCH a third level, a cycle, a parent with children becoming a child, and billing parent without a parent", async () => {
		const top = await createAccount();
		const child = await createAccount(undefined, { parent_account_id: top.id, billing: "parent" });
		const lone = await createAccount();
		const testKey = await createKey("admin", "test");
		const elsewhere = await createAccount(testKey);
		const cases: [string, Record<string, unknown>][] = [
			[lone.id, { parent_account_id: child.id }], // three levels
			[top.id, { parent_account_id: child.id }], // a cycle
			[top.id, { parent_account_id: top.id }], // its own parent
			[top.id, { parent_account_id: lone.id }], // a parent with children becoming a child
			[lone.id, { billing: "parent" }],
			[lone.id, { parent_account_id: elsewhere.id }],
			[lone.id, { parent_account_id: "acct_unknown" }],
			[child.id, { parent_account_id: null }], // would leave billing parent without a parent
		];
		for (const [id, body] of cases) {
			const before = (await get(`/v1/accounts/${id}`)).body;
			expectError(await patch(`/v1/accounts/${id}`, body), 409, "conflict");
			expect((await get(`/v1/accounts/${id}`)).body).toEqual(before);
		}
	});

	it.each([
		[{ billing: "other" }],
		[{ billing: null }],
		[{ use_parent_credits: "yes" }],
		[{ parent_account_id: 5 }],
	])("refuse %j with 400", async (fields) => {
		const acct = await createAccount();
		expectError(await patch(`/v1/accounts/${acct.id}`, fields), 400, "validation_error");
		expectError(
			await post("/v1/accounts", { name: "X", email: "x@acme.test", ...fields }),
			400,
			"validation_error",
		);
	});
});

describe("worked examples", () => {
	it("(1) a $10,000 parent grant shared by two children: 4,000 + 4,000, then 3,000 leaves 1,000 due", async () => {
		const parent = await createAccount();
		const pool = await grant(parent.id, 10_000);
		const one = await consumer({ parent_account_id: parent.id, use_parent_credits: true }, 1000, 4);
		const two = await consumer({ parent_account_id: parent.id, use_parent_credits: true }, 1000, 4);
		for (const child of [one, two]) {
			const inv = await generateOne(PERIOD, child.id);
			expect(inv).toMatchObject({
				account_id: child.id,
				payer_account_id: child.id,
				amount: 4000,
				credits_applied: 4000,
				amount_due: 0,
				status: "paid",
			});
		}
		await calls(one.instance, 3);
		const more = await generateOne(PERIOD, one.id);
		expect(more).toMatchObject({
			kind: "supplementary",
			amount: 3000,
			credits_applied: 2000,
			amount_due: 1000,
		});
		expect(more.status).toBe("open");
		expect(await grantOf(parent.id, pool.id)).toMatchObject({ remaining: 0, status: "depleted" });
	});

	it("(1') the child's own grants pay first, then the parent's", async () => {
		const parent = await createAccount();
		const parentGrant = await grant(parent.id, 1000);
		const child = await consumer({ parent_account_id: parent.id, use_parent_credits: true }, 100, 3);
		const own = await grant(child.id, 100);
		const inv = await generateOne(PERIOD, child.id);
		expect(inv).toMatchObject({ amount: 300, credits_applied: 300, amount_due: 0 });
		expect(await grantOf(child.id, own.id)).toMatchObject({ remaining: 0 });
		expect(await grantOf(parent.id, parentGrant.id)).toMatchObject({ remaining: 800 });
		// without use_parent_credits, the parent's grants never pay
		const alone = await consumer({ parent_account_id: parent.id }, 100, 1);
		expect(await generateOne(PERIOD, alone.id)).toMatchObject({ credits_applied: 0, amount_due: 100 });
		expect(await grantOf(parent.id, parentGrant.id)).toMatchObject({ remaining: 800 });
	});

	it("(2) a parent paying for a child: $500 from a $200 grant leaves $300 due from the parent", async () => {
		const parent = await createAccount(undefined, { name: "Holding", email: "ap@holding.test" });
		const parentGrant = await grant(parent.id, 200);
		const child = await consumer({ parent_account_id: parent.id, billing: "parent" }, 500, 1);
		const childGrant = await grant(child.id, 50);
		const inv = (await generateOne(PERIOD, child.id)) as any;
		expect(inv).toMatchObject({
			account_id: child.id,
			payer_account_id: parent.id,
			amount: 500,
			credits_applied: 200,
			amount_due: 300,
			amount_remaining: 300,
			status: "open",
		});
		expect(inv.bill_to).toMatchObject({ name: "Holding", email: "ap@holding.test" });
		expect(await invoice(inv.id)).toEqual(inv);
		expect(await grantOf(parent.id, parentGrant.id)).toMatchObject({ remaining: 0, status: "depleted" });
		expect(await grantOf(child.id, childGrant.id)).toMatchObject({ remaining: 50 });

		const statement = await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}`);
		expect(statement.status, JSON.stringify(statement.body)).toBe(200);
		expect(statement.body).toEqual({
			account_id: parent.id,
			billing_period: PERIOD,
			currency: "USD",
			invoices: [inv.id],
			amount: 500,
			credits_applied: 200,
			amount_due: 300,
			amount_paid: 0,
			amount_remaining: 300,
		});
		const paying = (await get(`/v1/invoices?payer_account_id=${parent.id}`)).body;
		expect(paying.invoices.map((i: { id: string }) => i.id)).toEqual([inv.id]);
		expect(paying.total).toBe(1);
		expect((await get(`/v1/invoices?payer_account_id=${child.id}`)).body.invoices).toEqual([]);

		const session = await post(`/v1/accounts/${parent.id}/portal-sessions`, {});
		const portal = await get("/portal/api/invoices", { key: session.body.token });
		expect(portal.status).toBe(200);
		expect(portal.body.invoices.map((i: { id: string }) => i.id)).toContain(inv.id);

		expect((await post(`/v1/invoices/${inv.id}/pay`, {})).status).toBe(200);
		const after = await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}`);
		expect(after.body).toMatchObject({ amount_paid: 300, amount_remaining: 0 });
	});
});

describe("GET /v1/accounts/{id}/statement", () => {
	it("sums the period's invoices the account pays, in one currency, and nothing else", async () => {
		await exchangeRate("USD", "AED", 3.6725);
		const parent = await consumer({}, 100, 1);
		const payedFor = await consumer({ parent_account_id: parent.id, billing: "parent" }, 50, 1);
		const selfPaying = await consumer({ parent_account_id: parent.id, use_parent_credits: true }, 70, 1);
		const inDirham = await consumer({ parent_account_id: parent.id, billing: "parent" }, 10, 1, "AED");
		const made = new Map<string, string>();
		for (const acct of [parent, payedFor, selfPaying, inDirham])
			made.set(acct.id, (await generateOne(PERIOD, acct.id)).id);

		const usd = (await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}`)).body;
		expect({ ...usd, invoices: [...usd.invoices].sort() }).toEqual({
			account_id: parent.id,
			billing_period: PERIOD,
			currency: "USD",
			invoices: [made.get(parent.id), made.get(payedFor.id)].sort(),
			amount: 150,
			credits_applied: 0,
			amount_due: 150,
			amount_paid: 0,
			amount_remaining: 150,
		});
		// 10.00 USD × 3.6725 = 36.725 → 36.73 AED
		const aed = await get(`/v1/accounts/${parent.id}/statement?billing_period=${PERIOD}&currency=AED`);
		expect(aed.body).toMatchObject({
			currency: "AED",
			invoices: [made.get(inDirham.id)],
			amount: 36.73,
			amount_due: 36.73,
		});
		const empty = await get(`/v1/accounts/${parent.id}/statement?billing_period=${shiftPeriod(PERIOD, -1)}`);
		expect(empty.body).toMatchObject({
			invoices: [],
			amount: 0,
			credits_applied: 0,
			amount_due: 0,
			amount_remaining: 0,
		});
		// a self-paying child's statement holds its own invoice
		const own = (await get(`/v1/accounts/${selfPaying.id}/statement?billing_period=${PERIOD}`)).body;
		expect(own).toMatchObject({ invoices: [made.get(selfPaying.id)], amount: 70 });
		// a child billed to its parent pays nothing itself
		expect((await get(`/v1/accounts/${payedFor.id}/statement?billing_period=${PERIOD}`)).body).toMatchObject({
			invoices: [],
			amount: 0,
		});
	});

	it("answers 400 for a bad period or currency, 404 for an unknown account, and is a read", async () => {
		const acct = await createAccount();
		for (const query of [
			"",
			"?billing_period=2026-13",
			"?billing_period=2026-1",
			`?billing_period=${PERIOD}&currency=usd`,
		])
			expectError(await get(`/v1/accounts/${acct.id}/statement${query}`), 400, "validation_error");
		expectError(await get(`/v1/accounts/acct_unknown/statement?billing_period=${PERIOD}`), 404, "not_found");
		const readOnly = await createKey("read-only");
		expect(
			(await get(`/v1/accounts/${acct.id}/statement?billing_period=${PERIOD}`, { key: readOnly })).status,
		).toBe(200);
		const sdk = await createKey("sdk");
		expectError(
			await get(`/v1/accounts/${acct.id}/statement?billing_period=${PERIOD}`, { key: sdk }),
			403,
			"forbidden",
		);
		const testKey = await createKey("admin", "test");
		expectError(
			await get(`/v1/accounts/${acct.id}/statement?billing_period=${PERIOD}`, { key: testKey }),
			404,
			"not_found",
		);
	});
});

describe("revenue by parent account", () => {
	it("counts a child's revenue under its parent and an account without a parent under itself", async () => {
		const parent = await consumer({}, 100, 1);
		const payedFor = await consumer({ parent_account_id: parent.id, billing: "parent" }, 50, 1);
		const selfPaying = await consumer({ parent_account_id: parent.id }, 70, 1);
		const lone = await consumer({}, 30, 1);
		for (const acct of [parent, payedFor, selfPaying, lone]) await generateOne(PERIOD, acct.id);
		const report = await get(`/v1/reports/revenue?${RANGE}&group_by=parent_account`);
		expect(report.status, JSON.stringify(report.body)).toBe(200);
		expect(report.body.group_by).toBe("parent_account");
		const rows = new Map(report.body.breakdown.map((r: { id: string }) => [r.id, r]));
		expect(rows.get(parent.id)).toEqual({ id: parent.id, name: parent.name, revenue: 220 });
		expect(rows.get(lone.id)).toEqual({ id: lone.id, name: lone.name, revenue: 30 });
		expect(rows.has(payedFor.id)).toBe(false);
		expect(rows.has(selfPaying.id)).toBe(false);
		const sum = report.body.breakdown.reduce(
			(s: number, r: { revenue: number }) => s + Math.round(r.revenue * 100),
			0,
		);
		expect(sum).toBe(Math.round(report.body.revenue * 100));
	});
});

describe("shared credits drawn at the same instant", () => {
	it.each([
		["use_parent_credits", { use_parent_credits: true }],
		["billing parent", { billing: "parent" }],
	])("children (%s) invoiced at once never overdraw the parent's grant", async (_label, fields) => {
		const parent = await createAccount();
		const pool = await grant(parent.id, 100);
		// two children of 80 each, then three of 40: each time more than the grant holds, asked at once
		for (const [amount, count] of [
			[80, 2],
			[40, 3],
		] as const) {
			if (amount === 40) await grant(parent.id, 100);
			const children = [];
			for (let i = 0; i < count; i++)
				children.push(await consumer({ parent_account_id: parent.id, ...fields }, amount, 1));
			const answers = await Promise.all(children.map((child) => generate(PERIOD, child.id)));
			const made = answers.flatMap((answer) => answer.invoices);
			expect(made).toHaveLength(count);
			expect(made.map((i) => i.credits_applied).reduce((s, x) => s + x, 0)).toBe(100);
			for (const inv of made) expect(inv.amount_due).toBe(amount - inv.credits_applied);
			const stored = (await Promise.all(children.map((child) => invoicesOf(child.id)))).flat();
			expect(stored.map((i) => i.credits_applied).reduce((s, x) => s + x, 0)).toBe(100);
		}
		expect(await grantOf(parent.id, pool.id)).toMatchObject({ remaining: 0, status: "depleted" });
		expect((await get(`/v1/accounts/${parent.id}/balance`)).body.available).toBe(0);
	});
});
