/**
 * The README's walk-through as an openapi-fetch client over the types openapi-typescript generates from
 * /v1/openapi.json with default settings. test/node/openapi-types.test.ts generates `./api` next to a copy of
 * this file and runs tsc on both: the flow must compile, and each `@ts-expect-error` must still be an error (so
 * the types stay as strict as the validation). Not part of the project's own tsc run (tsconfig excludes it).
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./api";

type ErrorCode = components["schemas"]["Error"]["error"]["code"];

export async function readmeFlow(
	baseUrl: string,
	operatorKey: string,
	period: string,
	from: string,
	to: string,
) {
	const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${operatorKey}` } });

	// 1. An SDK key; its secret is shown only in this answer.
	const created = await api.POST("/v1/api-keys", { body: { type: "sdk", name: "agents in production" } });
	if (!created.data) throw new Error(created.error.error.message);
	const sdkKey: string | null = created.data.key;
	const sdk = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${sdkKey}` } });

	// 2. An agent and one deployed instance of it.
	const agent = await api.POST("/v1/agents", { body: { name: "Lead qualifier", type: "langgraph" } });
	if (!agent.data) throw new Error(agent.error.error.message);
	const agentId: string = agent.data.id;
	await api.POST("/v1/agents/{agent_id}/instances", {
		params: { path: { agent_id: agentId } },
		body: { key: "lead-qualifier-eu-1" },
	});

	// 3. A rate plan, with the README's fields only (description, included_quantity… left to their defaults).
	const plan = await api.POST("/v1/pricing/rate-plans", {
		body: {
			name: "Growth",
			currency: "USD",
			base_fee: 49,
			charges: [
				{
					metric: "llm_calls",
					description: "LLM calls",
					source: { kind: "action", type: "llm_call", aggregate: "count" },
					model: "tiered",
					tiers: [
						{ up_to: 1000, unit_price: 0.01 },
						{ up_to: null, unit_price: 0.005 },
					],
				},
				{
					metric: "tokens",
					description: "LLM tokens",
					source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
					model: "per_unit",
					unit_price: 0.000002,
					included_quantity: 100000,
				},
				{
					metric: "lead_value",
					description: "Converted leads",
					source: { kind: "outcome", type: "converted_lead", aggregate: "sum" },
					model: "percentage",
					percent: 10,
				},
			],
		},
	});
	if (!plan.data) throw new Error(plan.error.error.message);
	const planId: string = plan.data.id;
	// A plan with nothing but its name and charges compiles too: every other field has a default.
	await api.POST("/v1/pricing/rate-plans", {
		body: {
			name: "Minimal",
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "llm_call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.01,
				},
			],
		},
	});

	// 4. What would some usage cost?
	const simulation = await api.POST("/v1/pricing/simulate", {
		body: { rate_plan_id: planId, usage: { llm_calls: 1500, tokens: 1234567, lead_value: 2500 } },
	});
	const total: number | undefined = simulation.data?.total;

	// 5. A customer, subscribed to the plan with that instance.
	const account = await api.POST("/v1/accounts", {
		body: { name: "Acme", email: "ap@acme.example", billing_address: { city: "Springfield", country: "US" } },
	});
	if (!account.data) throw new Error(account.error.error.message);
	const subscription = await api.POST("/v1/subscriptions", {
		body: { account_id: account.data.id, rate_plan_id: planId, agent_instance_ids: ["lead-qualifier-eu-1"] },
	});
	if (!subscription.data) throw new Error(subscription.error.error.message);
	const subscriptionId: string = subscription.data.id;

	// 6. Events (SDK key); an idempotency key makes a retry safe.
	const action = await sdk.POST("/v1/actions", {
		body: {
			agent_key: "lead-qualifier-eu-1",
			action_type: "llm_call",
			metadata: { tokens: 1830, cost: 0.004 },
			idempotency_key: "run-42-step-1",
		},
	});
	const replayed: string | undefined = action.response.headers.get("Idempotent-Replayed") ?? undefined;
	await sdk.POST("/v1/outcomes", {
		body: { agent_key: "lead-qualifier-eu-1", outcome_type: "converted_lead", value: 1200 },
		params: { header: { "Idempotency-Key": "outcome-1" } },
	});
	await sdk.POST("/v1/actions/batch", {
		body: {
			events: [
				{ agent_key: "lead-qualifier-eu-1", action_type: "tool_call" },
				{ agent_key: "lead-qualifier-eu-1", action_type: "llm_call", metadata: { tokens: 950 } },
			],
		},
	});

	// 7. Usage so far.
	const usage = await sdk.GET("/v1/usage", { params: { query: { subscription_id: subscriptionId } } });

	// 8. Invoices for the month, then payment.
	const generated = await api.POST("/v1/invoices/generate", {
		body: { billing_period: period },
		params: { header: { "Idempotency-Key": `generate-${period}` } },
	});
	const invoiceId = generated.data?.invoices[0]?.id;
	if (invoiceId) {
		await api.POST("/v1/invoices/{invoice_id}/pay", {
			params: { path: { invoice_id: invoiceId } },
			body: { reference: "wire-2026-001" },
		});
	}
	const invoices = await api.GET("/v1/invoices", { params: { query: { limit: 10, offset: 0 } } });
	const offset: number | undefined = invoices.data?.offset;

	// 9. Costs, revenue and margins.
	await api.GET("/v1/costs", { params: { query: { agent_id: agentId, start_date: from, end_date: to } } });
	await api.GET("/v1/reports/revenue", {
		params: { query: { start_date: from, end_date: to, group_by: "agent" } },
	});
	await api.GET("/v1/reports/pnl", { params: { query: { start_date: from, end_date: to } } });

	// 10. Webhooks: an endpoint (its secret is shown once), then a signed test delivery.
	const webhook = await api.POST("/v1/webhooks", {
		body: {
			url: "http://localhost:3000/hooks",
			events: ["invoice.created", "invoice.paid", "outcome.completed"],
		},
	});
	if (!webhook.data) throw new Error(webhook.error.error.message);
	const test = await api.POST("/v1/webhooks/test", {
		body: { webhook_id: webhook.data.id, event: "invoice.paid" },
	});
	const delivered: boolean | undefined = test.data?.result.delivered;

	// Errors are typed by their codes.
	const missing = await api.GET("/v1/agents/{agent_id}", { params: { path: { agent_id: "agt_unknown" } } });
	const code: ErrorCode | undefined = missing.error?.error.code;

	return { total, replayed, usage: usage.data, offset, delivered, code };
}

/** Mistakes the types must refuse, as the validation does. */
export async function refusedByTheTypes(api: ReturnType<typeof createClient<paths>>) {
	// @ts-expect-error: an agent type outside the enum
	await api.POST("/v1/agents", { body: { name: "x", type: "robot" } });
	// @ts-expect-error: a rate plan needs its charges
	await api.POST("/v1/pricing/rate-plans", { body: { name: "No charges" } });
	// @ts-expect-error: offset is an integer, never null
	await api.GET("/v1/invoices", { params: { query: { offset: null } } });
	// @ts-expect-error: an event kind that does not exist
	await api.POST("/v1/webhooks", { body: { url: "https://example.com/h", events: ["invoice.exploded"] } });
	// @ts-expect-error: error codes are a closed set
	const code: ErrorCode = "teapot";
	return code;
}
