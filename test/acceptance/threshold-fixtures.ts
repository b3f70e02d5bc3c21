/**
 * Subscriptions with an invoicing threshold and a look at their threshold invoices, for the black-box checks of
 * threshold invoicing.
 */
import { expect } from "vitest";
import { createAccount, get, post } from "../helpers";
import { createPlan, type Invoice, instanceKey } from "../invoicing/fixtures";
import { within } from "./plan-billing-fixtures";

/**
 * The contract's 10 seconds, with room for a machine that runs many test files at once (a load of 10 on two
 * cores made a first crossing take over 12 s). Still under the 20 s after which a lost request is sent again, so
 * an invoice that only comes from a resend fails the wait.
 */
export const CROSSING_MS = 18_000;

export async function thresholdSubscription(
	plan: Record<string, unknown>,
	threshold: number | null,
	accountFields = {},
) {
	const ratePlan = await createPlan(plan);
	const account = await createAccount(undefined, accountFields);
	const key = instanceKey();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: ratePlan.id,
		agent_instance_ids: [key],
		...(threshold === null ? {} : { invoicing_threshold: threshold }),
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return {
		account,
		key,
		plan: ratePlan,
		sub: response.body as { id: string; invoicing_threshold: number | null },
	};
}

export async function invoicesOfSubscription(subscriptionId: string): Promise<Invoice[]> {
	const response = await get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
	expect(response.status).toBe(200);
	return [...response.body.invoices].reverse();
}

export const thresholdInvoices = async (subscriptionId: string) =>
	(await invoicesOfSubscription(subscriptionId)).filter(
		(invoice) => (invoice.kind as string) === "threshold",
	);

/** Waits until the subscription has `count` threshold invoices (at most the contract's 10 seconds). */
export async function awaitThresholdInvoices(subscriptionId: string, count: number): Promise<Invoice[]> {
	const found = await within(CROSSING_MS, async () => {
		const invoices = await thresholdInvoices(subscriptionId);
		return invoices.length >= count ? invoices : undefined;
	});
	expect(found?.length ?? 0, `threshold invoices of ${subscriptionId} within ${CROSSING_MS} ms`).toBe(count);
	return found as Invoice[];
}

export const lineAmount = (invoice: Invoice, metric: string) =>
	invoice.line_items.filter((line) => line.metric === metric).reduce((sum, line) => sum + line.amount, 0);
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
