import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, patch, post } from "../helpers";
import {
	createPlan,
	currentPeriod,
	generateOne,
	instanceKey,
	MANUAL_COLLECTION,
	outboxEvents,
	subscribe,
} from "../invoicing/fixtures";

// Invoice documents and payments (§20): due dates from net terms, the bill-to snapshot, payments on the invoice
// and in GET /v1/payments, the overdue filter, and invoice.voided (§13).
const DAY_MS = 86_400_000;
const address = { street: "1 Main St", city: "Springfield", zip: "62701", country: "US" };

/** An account with its own open invoice of the plan's 40.00 base fee. */
async function invoicedAccount(account: Record<string, unknown> = {}) {
	const plan = await createPlan({ base_fee: 40, charges: [] });
	const created = await post("/v1/accounts", {
		name: "Globex",
		email: "ap@globex.example",
		billing_address: address,
		...account,
	});
	expect(created.status, JSON.stringify(created.body)).toBe(201);
	await subscribe(created.body.id, plan.id, [instanceKey()]);
	const invoice = await generateOne(currentPeriod(), created.body.id);
	return { account: created.body as { id: string }, invoice };
}

describe("invoice due date and bill-to (§20)", () => {
	it("is due issued_at + net terms and bills the account as it was when issued", async () => {
		const { account, invoice } = await invoicedAccount({ net_terms_days: 14 });
		expect(invoice.due_at).toBe(new Date(Date.parse(invoice.issued_at) + 14 * DAY_MS).toISOString());
		expect(invoice.bill_to).toEqual({ name: "Globex", email: "ap@globex.example", billing_address: address });
		expect(invoice).toMatchObject({
			amount: 40,
			credits_applied: 0,
			amount_due: 40,
			payments: [],
			status: "open",
		});

		// A later change of the account does not rewrite an issued invoice.
		await patch(`/v1/accounts/${account.id}`, { name: "Globex Corporation", billing_address: null });
		const again = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(again.bill_to).toEqual(invoice.bill_to);
		expect(again.due_at).toBe(invoice.due_at);
	});

	it("is due on issue with net terms of 0", async () => {
		const { invoice } = await invoicedAccount({ net_terms_days: 0, billing_address: null });
		expect(invoice.due_at).toBe(invoice.issued_at);
		expect(invoice.bill_to).toEqual({ name: "Globex", email: "ap@globex.example", billing_address: null });
	});
});

describe("payments (§20)", () => {
	it("stores the reference: on the invoice and in GET /v1/payments", async () => {
		const { account, invoice } = await invoicedAccount();
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-2026-001" });
		expect(paid.status).toBe(200);
		const [payment] = paid.body.payments;
		expect(paid.body.payments).toEqual([
			{
				id: expect.stringMatching(/^pay_[0-9a-z]{26}$/),
				kind: "payment",
				provider: "manual",
				amount: 40,
				reference: "wire-2026-001",
				paid_at: paid.body.paid_at,
			},
		]);
		expect((await get(`/v1/invoices/${invoice.id}`)).body.payments).toEqual([payment]);
		const listed = (await get(`/v1/invoices?account_id=${account.id}`)).body.invoices[0];
		expect(listed.payments).toEqual([payment]);

		const expected = {
			id: payment.id,
			invoice_id: invoice.id,
			account_id: account.id,
			amount: 40,
			currency: "USD",
			kind: "payment",
			provider: "manual",
			reference: "wire-2026-001",
			paid_at: paid.body.paid_at,
		};
		expect((await get(`/v1/payments?account_id=${account.id}`)).body).toEqual({
			payments: [expected],
			total: 1,
			limit: 20,
			offset: 0,
		});
		expect((await get(`/v1/payments?invoice_id=${invoice.id}`)).body.payments).toEqual([expected]);
		expect((await get(`/v1/payments?invoice_id=${invoice.id}&account_id=acct_other`)).body).toMatchObject({
			payments: [],
			total: 0,
		});
	});

	it("lists payments newest first, a page at a time, in the key's environment only", async () => {
		const { account, invoice: first } = await invoicedAccount();
		await post(`/v1/invoices/${first.id}/pay`, { reference: "first" });
		const plan = await createPlan({ base_fee: 5, charges: [] });
		await subscribe(account.id, plan.id, [instanceKey()]);
		const second = await generateOne(currentPeriod(), account.id);
		await post(`/v1/invoices/${second.id}/pay`, { reference: "second" });

		const page = (await get(`/v1/payments?account_id=${account.id}&limit=1`)).body;
		expect(page).toMatchObject({ total: 2, limit: 1, offset: 0 });
		expect(page.payments.map((p: { reference: string }) => p.reference)).toEqual(["second"]);
		const next = (await get(`/v1/payments?account_id=${account.id}&limit=1&offset=1`)).body;
		expect(next.payments.map((p: { reference: string }) => p.reference)).toEqual(["first"]);

		const testKey = await createKey("read-only", "test");
		expect((await get(`/v1/payments?account_id=${account.id}`, { key: testKey })).body.total).toBe(0);
	});

	it.each(["limit=0", "limit=101", "offset=-1", "account_id=", "status=paid"])(
		"answers 400 to GET /v1/payments?%s",
		async (query) => {
			expectError(await get(`/v1/payments?${query}`), 400, "validation_error");
		},
	);

	it("lets read-only keys list payments and refuses SDK keys", async () => {
		expect((await get("/v1/payments", { key: await createKey("read-only") })).status).toBe(200);
		expectError(await get("/v1/payments", { key: await createKey("sdk") }), 403, "forbidden");
	});
});

describe("GET /v1/invoices?overdue= (§20)", () => {
	it("lists open invoices past their due date, and with overdue=false every other", async () => {
		const late = await invoicedAccount({ net_terms_days: 0 });
		const onTime = await invoicedAccount({ net_terms_days: 30 });
		const settled = await invoicedAccount({ net_terms_days: 0 });
		await post(`/v1/invoices/${settled.invoice.id}/pay`, {});
		await new Promise((resolve) => setTimeout(resolve, 5));

		const ids = async (query: string) =>
			(await get(`/v1/invoices?${query}&limit=100`)).body.invoices.map((i: { id: string }) => i.id);
		const overdue = await ids("overdue=true");
		expect(overdue).toContain(late.invoice.id);
		expect(overdue).not.toContain(onTime.invoice.id);
		expect(overdue).not.toContain(settled.invoice.id);
		expect(await ids(`overdue=true&account_id=${late.account.id}`)).toEqual([late.invoice.id]);

		const notOverdue = await ids("overdue=false");
		expect(notOverdue).toContain(onTime.invoice.id);
		expect(notOverdue).toContain(settled.invoice.id);
		expect(notOverdue).not.toContain(late.invoice.id);
	});

	it.each(["overdue=yes", "overdue=1", "overdue=TRUE"])("answers 400 to %s", async (query) => {
		expectError(await get(`/v1/invoices?${query}`), 400, "validation_error");
	});
});

describe("invoice.voided (§13)", () => {
	it("is emitted by void with the invoice.created data plus voided_at, once", async () => {
		const { account, invoice } = await invoicedAccount();
		const voided = await post(`/v1/invoices/${invoice.id}/void`);
		expect(voided.status).toBe(200);
		await post(`/v1/invoices/${invoice.id}/void`);
		const events = await outboxEvents("invoice.voided", invoice.id);
		expect(events.map((e) => e.data)).toEqual([
			{
				invoice_id: invoice.id,
				account_id: account.id,
				subscription_id: invoice.subscription_id,
				billing_period: invoice.billing_period,
				amount: 40,
				currency: "USD",
				status: "void",
				voided_at: voided.body.voided_at,
				collection: MANUAL_COLLECTION,
			},
		]);
	});

	it("is not emitted when a paid invoice refuses the void", async () => {
		const { invoice } = await invoicedAccount();
		await post(`/v1/invoices/${invoice.id}/pay`, {});
		expectError(await post(`/v1/invoices/${invoice.id}/void`), 409, "conflict");
		expect(await outboxEvents("invoice.voided", invoice.id)).toEqual([]);
		const row = await env.DB.prepare("SELECT status FROM invoices WHERE id = ?1").bind(invoice.id).first();
		expect(row).toEqual({ status: "paid" });
	});
});
