/**
 * Builders for invoicing tests. Scenarios go through the public API the way an operator would: a rate plan, an
 * account, a subscription of agent instances, events sent with an SDK key, then POST /v1/invoices/generate.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_KEY, createAccount, createKey, get, post } from "../helpers";

export type Environment = "live" | "test";

/** The month in progress (UTC), which may be invoiced: billing it bills what was metered so far. */
export function currentPeriod(now = new Date()): string {
	return now.toISOString().slice(0, 7);
}

export function shiftPeriod(period: string, months: number): string {
	const [year, month] = period.split("-").map(Number) as [number, number];
	return new Date(Date.UTC(year, month - 1 + months, 1)).toISOString().slice(0, 7);
}

/** A unique agent instance key, so tests of one file never share usage. */
export function instanceKey(label = "bot"): string {
	return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

export async function createPlan(plan: Record<string, unknown>, key: string = ADMIN_KEY) {
	const response = await post("/v1/pricing/rate-plans", { name: "Plan", ...plan }, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; currency: string };
}

export async function subscribe(
	accountId: string,
	ratePlanId: string,
	agentInstanceIds: string[],
	key: string = ADMIN_KEY,
) {
	const response = await post(
		"/v1/subscriptions",
		{ account_id: accountId, rate_plan_id: ratePlanId, agent_instance_ids: agentInstanceIds },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; account_id: string; rate_plan_id: string; started_at: string };
}

/** An account subscribed to a new plan with fresh instances, in one environment. */
export async function customer(
	plan: Record<string, unknown>,
	options: { key?: string; instances?: number } = {},
) {
	const key = options.key ?? ADMIN_KEY;
	const ratePlan = await createPlan(plan, key);
	const account = await createAccount(key, { currency: ratePlan.currency });
	const instances = Array.from({ length: options.instances ?? 1 }, () => instanceKey());
	const subscription = await subscribe(account.id, ratePlan.id, instances, key);
	return { plan: ratePlan, account, subscription, instances, key };
}

const sdkKeys = new Map<Environment, string>();
export async function sdkKey(environment: Environment = "live"): Promise<string> {
	let key = sdkKeys.get(environment);
	if (!key) {
		key = await createKey("sdk", environment);
		sdkKeys.set(environment, key);
	}
	return key;
}

export interface ActionSpec {
	agent_key: string;
	action_type: string;
	metadata?: Record<string, unknown>;
	timestamp?: string;
}

export async function sendActions(events: ActionSpec[], environment: Environment = "live") {
	const key = await sdkKey(environment);
	for (let i = 0; i < events.length; i += 1000) {
		const response = await post("/v1/actions/batch", { events: events.slice(i, i + 1000) }, { key });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
	}
}

/** `count` identical actions of one instance. */
export function actions(
	agentKey: string,
	actionType: string,
	count: number,
	metadata?: Record<string, unknown>,
) {
	return Array.from({ length: count }, () => ({ agent_key: agentKey, action_type: actionType, metadata }));
}

export async function sendOutcome(
	agentKey: string,
	outcomeType: string,
	value: number,
	environment: Environment = "live",
) {
	const key = await sdkKey(environment);
	const response = await post(
		"/v1/outcomes",
		{ agent_key: agentKey, outcome_type: outcomeType, value },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

export interface Invoice {
	id: string;
	number: string;
	account_id: string;
	subscription_id: string;
	rate_plan_id: string;
	billing_period: string;
	period_start: string;
	period_end: string;
	kind: "regular" | "supplementary";
	status: "open" | "paid" | "void";
	currency: string;
	line_items: { metric: string; description: string; quantity: number; amount: number }[];
	amount: number;
	issued_at: string;
	paid_at: string | null;
	voided_at: string | null;
	created_at: string;
	due_at: string;
	bill_to: { name: string; email: string; billing_address: Record<string, string> | null };
	credits_applied: number;
	amount_due: number;
	amount_paid: number;
	amount_remaining: number;
	payments: { id: string; amount: number; reference: string | null; paid_at: string }[];
	/** How it is being collected (docs/payments.md). */
	collection: Record<string, any>;
}

export async function generate(
	billingPeriod: string,
	accountId?: string,
	key: string = ADMIN_KEY,
): Promise<{ status: number; invoices: Invoice[] }> {
	const body =
		accountId === undefined
			? { billing_period: billingPeriod }
			: { billing_period: billingPeriod, account_id: accountId };
	const response = await post("/v1/invoices/generate", body, { key });
	expect([200, 201], JSON.stringify(response.body)).toContain(response.status);
	return { status: response.status, invoices: response.body.invoices };
}

/** Generates for one account and expects exactly one new invoice. */
export async function generateOne(billingPeriod: string, accountId: string, key: string = ADMIN_KEY) {
	const { status, invoices } = await generate(billingPeriod, accountId, key);
	expect(status).toBe(201);
	expect(invoices).toHaveLength(1);
	return invoices[0] as Invoice;
}

export async function invoicesOf(accountId: string, key: string = ADMIN_KEY): Promise<Invoice[]> {
	const response = await get(`/v1/invoices?account_id=${accountId}&limit=100`, { key });
	expect(response.status).toBe(200);
	return response.body.invoices;
}

/** Line items as [metric, quantity, amount] triples, easy to compare with hand-computed figures. */
export const linesOf = (invoice: Invoice) =>
	invoice.line_items.map((line) => [line.metric, line.quantity, line.amount] as const);

export async function outboxEvents(event: string, invoiceId: string) {
	const { results } = await env.DB.prepare(
		"SELECT event, environment, data FROM webhook_events WHERE event = ?1 AND json_extract(data, '$.invoice_id') = ?2 ORDER BY created_at, id",
	)
		.bind(event, invoiceId)
		.all<{ event: string; environment: string; data: string }>();
	return results.map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
}

/** The collection of an invoice of a manual account (docs/payments.md#collection), spelled out as a client sees it. */
export const MANUAL_COLLECTION = {
	provider: "manual",
	status: "none",
	attempts: 0,
	next_attempt_at: null,
	payment_intent_id: null,
	checkout_session_id: null,
	payment_url: null,
	last_error: null,
} as const;
