/**
 * Builders for the black-box checks of currencies and account hierarchies: plans, subscriptions in a billing
 * currency, rates and usage, all through the public API as an operator's client would call it.
 */
import { expect } from "vitest";
import { createAccount, get, post } from "../helpers";
import { createPlan, currentPeriod, instanceKey, sendActions } from "../invoicing/fixtures";

export const PERIOD = currentPeriod();
const [year, month] = PERIOD.split("-").map(Number) as [number, number];
/** The current period as a report's date range. */
export const RANGE = `start_date=${PERIOD}-01&end_date=${new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10)}`;

export const hoursFromNow = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

/** A count of `call` actions priced per unit. */
export const perCall = (unitPrice: number, metric = "calls", type = "call") => ({
	metric,
	source: { kind: "action", type, aggregate: "count" },
	model: "per_unit",
	unit_price: unitPrice,
});

/** A rate through POST /v1/exchange-rates (effective now when no instant is given). */
export { addRate as exchangeRate } from "../exchange-rates/fixtures";

export async function subscription(
	accountId: string,
	ratePlanId: string,
	fields: Record<string, unknown> = {},
) {
	const instance = instanceKey();
	const response = await post("/v1/subscriptions", {
		account_id: accountId,
		rate_plan_id: ratePlanId,
		agent_instance_ids: [instance],
		...fields,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { ...(response.body as { id: string; billing_currency: string }), instance };
}

/** An account (of `accountFields`) subscribed to a new plan, billed in `billingCurrency` when given. */
export async function billedIn(
	plan: Record<string, unknown>,
	billingCurrency?: string,
	accountFields: Record<string, unknown> = {},
) {
	const ratePlan = await createPlan({ charges: [], ...plan });
	const account = await createAccount(undefined, accountFields);
	const sub = await subscription(
		account.id,
		ratePlan.id,
		billingCurrency === undefined ? {} : { billing_currency: billingCurrency },
	);
	return { plan: ratePlan, account, subscription: sub, instance: sub.instance };
}

export async function calls(instance: string, count: number, type = "call") {
	await sendActions(Array.from({ length: count }, () => ({ agent_key: instance, action_type: type })));
}

export async function grant(accountId: string, amount: number, fields: Record<string, unknown> = {}) {
	const response = await post(`/v1/accounts/${accountId}/credit-grants`, { amount, ...fields });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; amount: number; remaining: number; currency: string };
}

export async function invoice(id: string) {
	const response = await get(`/v1/invoices/${id}`);
	expect(response.status).toBe(200);
	return response.body;
}

/** Lines as [original_amount, original_currency, amount], sorted, to compare with hand computations. */
export const converted = (inv: {
	line_items: { original_amount: number; original_currency: string; amount: number }[];
}) =>
	inv.line_items
		.map((line) => [line.original_amount, line.original_currency, line.amount] as const)
		.sort((a, b) => b[0] - a[0]);
