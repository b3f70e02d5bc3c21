/** Builders shared by the subscription and metering tests. Every test makes its own resources. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { accumulatorName, accumulatorStub } from "../../src/durable-objects/usage-accumulator/handle";
import { ADMIN_KEY, createAccount, post } from "../helpers";

export const uniqueKey = (prefix = "inst") => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

/** tokens: $0.001 each, api calls: $0.01 each after 2 free, base fee $10. */
export const standardCharges = [
	{
		metric: "tokens",
		source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
		model: "per_unit",
		unit_price: 0.001,
	},
	{
		metric: "calls",
		source: { kind: "action", type: "llm_call", aggregate: "count" },
		model: "per_unit",
		unit_price: 0.01,
		included_quantity: 2,
	},
	{
		metric: "hires",
		source: { kind: "outcome", type: "hire", aggregate: "sum" },
		model: "percentage",
		percent: 10,
	},
];

/** A plan body of the plan-change tests: "Growth", $20 a month, the standard charges. */
export const planBody = (fields: Record<string, unknown> = {}) => ({
	name: "Growth",
	currency: "USD",
	base_fee: 20,
	charges: standardCharges,
	...fields,
});

export async function newPlan(fields: Record<string, unknown> = {}) {
	const response = await post("/v1/pricing/rate-plans", planBody(fields));
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; version: number };
}

export async function newVersion(id: string, fields: Record<string, unknown> = {}) {
	const response = await post(`/v1/pricing/rate-plans/${id}/versions`, planBody(fields));
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; version: number };
}

export async function createPlan(fields: Record<string, unknown> = {}, key: string = ADMIN_KEY) {
	const response = await post(
		"/v1/pricing/rate-plans",
		{ name: "Pro", currency: "USD", base_fee: 10, charges: standardCharges, ...fields },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; currency: string };
}

export interface SubscriptionBody {
	id: string;
	account_id: string;
	rate_plan_id: string;
	pending_rate_plan_id: string | null;
	agent_instance_ids: string[];
	status: "active" | "cancelled";
	started_at: string;
	cancelled_at: string | null;
	created_at: string;
}

/** An account, a plan and an active subscription of `keys` (fresh keys when none are given). */
export async function subscribe(keys: string[] = [uniqueKey()], key: string = ADMIN_KEY) {
	const account = await createAccount(key);
	const plan = await createPlan({}, key);
	const response = await post(
		"/v1/subscriptions",
		{ account_id: account.id, rate_plan_id: plan.id, agent_instance_ids: keys },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return { account, plan, subscription: response.body as SubscriptionBody, keys };
}

export async function sendAction(
	body: Record<string, unknown>,
	options: { key?: string; headers?: Record<string, string> } = {},
) {
	return post("/v1/actions", { action_type: "llm_call", ...body }, options);
}

export async function sendOutcome(
	body: Record<string, unknown>,
	options: { key?: string; headers?: Record<string, string> } = {},
) {
	return post("/v1/outcomes", { outcome_type: "hire", value: 1, ...body }, options);
}

export function subscriptionAccumulator(subscriptionId: string, environment: "live" | "test" = "live") {
	return accumulatorStub(env, accumulatorName(environment, { subscriptionId }));
}

export function instanceAccumulator(agentKey: string, environment: "live" | "test" = "live") {
	return accumulatorStub(env, accumulatorName(environment, { agentKey }));
}

export async function outboxEvents(kind: string, match: (data: any) => boolean) {
	const { results } = await env.DB.prepare(
		"SELECT id, environment, event, data FROM webhook_events WHERE event = ?",
	)
		.bind(kind)
		.all<{ id: string; environment: string; event: string; data: string }>();
	return results.map((row) => ({ ...row, data: JSON.parse(row.data) })).filter((row) => match(row.data));
}
