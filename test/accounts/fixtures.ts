/** Builders for hierarchy tests: a parent, its children, plans with a base fee, invoices of the current period. */
import { expect } from "vitest";
import { createAccount, get, post } from "../helpers";
import { createPlan, currentPeriod, generate, instanceKey, subscribe } from "../invoicing/fixtures";

export const period = currentPeriod();

export async function account(fields: Record<string, unknown> = {}) {
	return (await createAccount(undefined, { name: `Acct ${crypto.randomUUID().slice(0, 6)}`, ...fields })) as {
		id: string;
		name: string;
		email: string;
		currency: string;
	};
}

export async function grant(accountId: string, amount: number, fields: Record<string, unknown> = {}) {
	const response = await post(`/v1/accounts/${accountId}/credit-grants`, { amount, ...fields });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string };
}

/** A subscription of the account to a new plan that bills `baseFee` a period and nothing else. */
export async function subscribeFee(accountId: string, baseFee: number) {
	const plan = await createPlan({ base_fee: baseFee, charges: [] });
	return subscribe(accountId, plan.id, [instanceKey()]);
}

/** The current period's invoices generated now for the account (a single one expected). */
export async function invoiceNow(accountId: string) {
	const { invoices } = await generate(period, accountId);
	expect(invoices).toHaveLength(1);
	return invoices[0] as Record<string, any>;
}

export async function remaining(accountId: string, grantId: string): Promise<number> {
	const list = await get(`/v1/accounts/${accountId}/credit-grants?limit=100`);
	return list.body.credit_grants.find((g: { id: string }) => g.id === grantId).remaining;
}
