/** Builders for threshold-invoice tests: a tiered plan, a subscription with a threshold, waiting for invoices. */
import { expect, vi } from "vitest";
import { ADMIN_KEY, createAccount, get, post } from "../helpers";
import { createPlan, instanceKey } from "../invoicing/fixtures";

/** Calls at $1 each for the first 10, then $0.50; a $10 base fee. */
export const TIERED_PLAN = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "tiered",
			tiers: [
				{ up_to: 10, unit_price: 1 },
				{ up_to: null, unit_price: 0.5 },
			],
		},
	],
};

export interface ThresholdInvoice {
	id: string;
	kind: string;
	status: string;
	amount: number;
	credits_applied: number;
	amount_due: number;
	line_items: { metric: string; description: string; quantity: number; amount: number }[];
}

/** An account subscribed to `plan` with `threshold`, and its instance key. */
export async function thresholdCustomer(
	threshold: number | null,
	plan: Record<string, unknown> = TIERED_PLAN,
) {
	const ratePlan = await createPlan(plan);
	const account = await createAccount(ADMIN_KEY, { currency: ratePlan.currency });
	const instance = instanceKey();
	const response = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: ratePlan.id,
		agent_instance_ids: [instance],
		invoicing_threshold: threshold,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { plan: ratePlan, account, instance, subscription: response.body as { id: string } };
}

export async function invoicesOf(subscriptionId: string): Promise<ThresholdInvoice[]> {
	const response = await get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
	expect(response.status).toBe(200);
	return (response.body.invoices as ThresholdInvoice[]).reverse();
}

/** Waits (up to 10 s, the promise of the docs) until the subscription has `count` threshold invoices. */
export async function thresholdInvoices(subscriptionId: string, count: number): Promise<ThresholdInvoice[]> {
	return vi.waitFor(
		async () => {
			const found = (await invoicesOf(subscriptionId)).filter((invoice) => invoice.kind === "threshold");
			if (found.length < count) throw new Error(`${found.length} threshold invoices of ${count}`);
			return found;
		},
		{ timeout: 10_000, interval: 200 },
	);
}
