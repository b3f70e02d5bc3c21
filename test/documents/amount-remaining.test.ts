/**
 * What is left to pay: invoices carry amount_paid (the sum of their payments) and amount_remaining (amount_due −
 * amount_paid, never below 0) in every view — created, read, listed, paid, upcoming — and the OpenAPI document
 * says so.
 */
import { describe, expect, it } from "vitest";
import { createAccount, get, post } from "../helpers";
import {
	createPlan,
	currentPeriod,
	generateOne,
	type Invoice,
	instanceKey,
	subscribe,
} from "../invoicing/fixtures";

/** A new subscription of the account to a plan of only a base fee, invoiced now. */
async function invoiceOf(accountId: string, baseFee: number) {
	const plan = await createPlan({ base_fee: baseFee, charges: [] });
	const subscription = await subscribe(accountId, plan.id, [instanceKey()]);
	return { subscription, invoice: await generateOne(currentPeriod(), accountId) };
}

async function everyView(invoice: Invoice) {
	const read = (await get(`/v1/invoices/${invoice.id}`)).body as Invoice;
	const listed = (await get(`/v1/invoices?account_id=${invoice.account_id}&limit=100`)).body.invoices.find(
		(other: Invoice) => other.id === invoice.id,
	) as Invoice;
	return [read, listed];
}

const amounts = ({
	amount,
	credits_applied,
	amount_due,
	amount_paid,
	amount_remaining,
	status,
}: Invoice) => ({
	amount,
	credits_applied,
	amount_due,
	amount_paid,
	amount_remaining,
	status,
});

describe("invoice amount_paid and amount_remaining", () => {
	it("are 0 and amount_due while open, amount_due and 0 once paid", async () => {
		const account = await createAccount();
		const { invoice } = await invoiceOf(account.id, 40);
		const open = { amount: 40, credits_applied: 0, amount_due: 40, amount_paid: 0, amount_remaining: 40 };
		expect(amounts(invoice)).toEqual({ ...open, status: "open" });
		for (const view of await everyView(invoice)) expect(amounts(view)).toEqual({ ...open, status: "open" });

		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-1" });
		expect(paid.status).toBe(200);
		const settled = { ...open, amount_paid: 40, amount_remaining: 0, status: "paid" };
		expect(amounts(paid.body)).toEqual(settled);
		for (const view of await everyView(invoice)) expect(amounts(view)).toEqual(settled);
	});

	it("count only what was paid after credits: credits are in amount_due, not amount_paid", async () => {
		const account = await createAccount();
		await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 15 });
		const { invoice } = await invoiceOf(account.id, 40);
		expect(amounts(invoice)).toMatchObject({ credits_applied: 15, amount_due: 25, amount_paid: 0 });
		expect(invoice.amount_remaining).toBe(25);
		const paid = (await post(`/v1/invoices/${invoice.id}/pay`, {})).body as Invoice;
		expect(amounts(paid)).toMatchObject({ amount_due: 25, amount_paid: 25, amount_remaining: 0 });
	});

	it("are 0 and 0 on an invoice that credits paid at once", async () => {
		const account = await createAccount();
		await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 100 });
		const { invoice } = await invoiceOf(account.id, 40);
		const expected = {
			amount: 40,
			credits_applied: 40,
			amount_due: 0,
			amount_paid: 0,
			amount_remaining: 0,
			status: "paid",
		};
		expect(amounts(invoice)).toEqual(expected);
		for (const view of await everyView(invoice)) expect(amounts(view)).toEqual(expected);
	});

	it("are 0 and amount_due on an upcoming invoice", async () => {
		const account = await createAccount();
		const plan = await createPlan({ base_fee: 40, charges: [] });
		const subscription = await subscribe(account.id, plan.id, [instanceKey()]);
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.status).toBe(200);
		expect(upcoming.body).toMatchObject({ amount_due: 40, amount_paid: 0, amount_remaining: 40 });
	});

	it("are required numbers of Invoice and UpcomingInvoice in the OpenAPI document", async () => {
		const { components } = (await get("/v1/openapi.json", { key: null })).body;
		for (const name of ["Invoice", "UpcomingInvoice"]) {
			const schema = components.schemas[name];
			for (const field of ["amount_paid", "amount_remaining"]) {
				expect(schema.required, name).toContain(field);
				expect(schema.properties[field].type, `${name}.${field}`).toBe("number");
			}
		}
	});
});
