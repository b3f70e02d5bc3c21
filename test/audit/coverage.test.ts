/**
 * Every state-changing route of the OpenAPI document writes an audit record (docs/audit-log.md). The routes are
 * read from the document, so a new POST, PATCH or DELETE fails here until it has an example call below, and
 * that call's success must have written at least one record carrying its request id. Event ingest and
 * reservations are exempt, and so is the price simulation, which changes nothing.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, createAccount, createAgent, createKey, get, post } from "../helpers";
import { currentPeriod, generateOne } from "../invoicing/fixtures";
import { createPlan, subscribe, uniqueKey } from "../subscriptions/fixtures";
import { captureQueue, createEndpoint, stubReceiver } from "../webhooks/fixtures";

const EXEMPT = [
	/^POST \/v1\/(actions|outcomes)(\/batch)?$/,
	/\/reservations(\/|$)/,
	/^POST \/v1\/pricing\/simulate$/,
	// Stripe's webhook has no key and needs Stripe's signature: test/payments/webhook.test.ts checks its records.
	/^POST \/v1\/integrations\/stripe\/webhook$/,
];

interface Example {
	path: string;
	body?: unknown;
	/** The resource type of the record(s) the call must write. */
	records: string;
}

afterEach(() => {
	vi.restoreAllMocks();
});

async function openInvoice() {
	const { account } = await subscribe();
	return generateOne(currentPeriod(), account.id);
}

async function computeInvoice() {
	const account = await createAccount(undefined, { invoice_grace_days: 3 });
	const plan = await createPlan();
	const made = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [uniqueKey()],
	});
	expect(made.status, JSON.stringify(made.body)).toBe(201);
	const draft = await generateOne(currentPeriod(), account.id);
	expect(draft.status).toBe("draft");
	return draft;
}

async function testDelivery() {
	stubReceiver();
	const endpoint = await createEndpoint();
	const sent = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.created" });
	expect(sent.status, JSON.stringify(sent.body)).toBe(200);
	return { endpoint, deliveryId: sent.body.result.delivery_id as string };
}

/** One successful call per route, keyed as the OpenAPI document names it. Add the new routes here. */
const EXAMPLES: Record<string, () => Promise<Example>> = {
	"POST /v1/agents": async () => ({
		path: "/v1/agents",
		body: { name: "A", type: "custom" },
		records: "agent",
	}),
	"PATCH /v1/agents/{agent_id}": async () => ({
		path: `/v1/agents/${(await createAgent()).id}`,
		body: { name: "Renamed" },
		records: "agent",
	}),
	"POST /v1/agents/{agent_id}/instances": async () => ({
		path: `/v1/agents/${(await createAgent()).id}/instances`,
		body: { key: uniqueKey() },
		records: "agent_instance",
	}),
	"POST /v1/accounts": async () => ({
		path: "/v1/accounts",
		body: { name: "Acme", email: "a@acme.test" },
		records: "account",
	}),
	"PATCH /v1/accounts/{account_id}": async () => ({
		path: `/v1/accounts/${(await createAccount()).id}`,
		body: { email: "new@acme.test" },
		records: "account",
	}),
	"POST /v1/accounts/{account_id}/credit-grants": async () => ({
		path: `/v1/accounts/${(await createAccount()).id}/credit-grants`,
		body: { amount: 5 },
		records: "credit_grant",
	}),
	"POST /v1/accounts/{account_id}/credit-grants/{credit_grant_id}/void": async () => {
		const account = await createAccount();
		const grant = await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5 });
		return {
			path: `/v1/accounts/${account.id}/credit-grants/${grant.body.id}/void`,
			records: "credit_grant",
		};
	},
	"POST /v1/accounts/{account_id}/portal-sessions": async () => ({
		path: `/v1/accounts/${(await createAccount()).id}/portal-sessions`,
		body: {},
		records: "portal_session",
	}),
	"DELETE /v1/portal-sessions/{portal_session_id}": async () => {
		const session = await post(`/v1/accounts/${(await createAccount()).id}/portal-sessions`, {});
		return { path: `/v1/portal-sessions/${session.body.id}`, records: "portal_session" };
	},
	"POST /v1/api-keys": async () => ({
		path: "/v1/api-keys",
		body: { type: "api", permission: "read-only" },
		records: "api_key",
	}),
	"DELETE /v1/api-keys/{api_key_id}": async () => {
		const key = await post("/v1/api-keys", { type: "sdk" });
		return { path: `/v1/api-keys/${key.body.id}`, records: "api_key" };
	},
	"POST /v1/costs": async () => ({
		path: "/v1/costs",
		body: { agent_id: (await createAgent()).id, cost_type: "llm", amount: 1.25, period: currentPeriod() },
		records: "cost",
	}),
	"POST /v1/model-prices": async () => ({
		path: "/v1/model-prices",
		body: { provider: "acme-ai", model: `m-${uniqueKey()}`, input_per_million: 1 },
		records: "model_price",
	}),
	"POST /v1/exchange-rates": async () => ({
		path: "/v1/exchange-rates",
		body: { base: "USD", quote: "EUR", rate: 0.92 },
		records: "exchange_rate",
	}),
	"DELETE /v1/model-prices/{model_price_id}": async () => {
		const price = await post("/v1/model-prices", { provider: "acme-ai", model: `m-${uniqueKey()}` });
		return { path: `/v1/model-prices/${price.body.id}`, records: "model_price" };
	},
	"POST /v1/pricing/rate-plans": async () => ({
		path: "/v1/pricing/rate-plans",
		body: { name: "Flat", currency: "USD", base_fee: 3, charges: [] },
		records: "rate_plan",
	}),
	"DELETE /v1/pricing/rate-plans/{rate_plan_id}": async () => ({
		path: `/v1/pricing/rate-plans/${(await createPlan()).id}`,
		records: "rate_plan",
	}),
	"POST /v1/pricing/rate-plans/{rate_plan_id}/versions": async () => ({
		path: `/v1/pricing/rate-plans/${(await createPlan()).id}/versions`,
		body: { name: "Pro", currency: "USD", base_fee: 12, charges: [] },
		records: "rate_plan",
	}),
	"POST /v1/pricing/rate-plans/{rate_plan_id}/migrate": async () => {
		const { subscription } = await subscribe();
		const version = await post(`/v1/pricing/rate-plans/${subscription.rate_plan_id}/versions`, {
			name: "Pro",
			currency: "USD",
			base_fee: 12,
			charges: [],
		});
		expect(version.status, JSON.stringify(version.body)).toBe(201);
		return {
			path: `/v1/pricing/rate-plans/${subscription.rate_plan_id}/migrate`,
			body: {},
			records: "subscription",
		};
	},
	"POST /v1/subscriptions/{subscription_id}/change-plan": async () => {
		const { subscription } = await subscribe();
		return {
			path: `/v1/subscriptions/${subscription.id}/change-plan`,
			body: { rate_plan_id: (await createPlan()).id },
			records: "subscription",
		};
	},
	"POST /v1/subscriptions": async () => ({
		path: "/v1/subscriptions",
		body: {
			account_id: (await createAccount()).id,
			rate_plan_id: (await createPlan()).id,
			agent_instance_ids: [uniqueKey()],
		},
		records: "subscription",
	}),
	"PATCH /v1/subscriptions/{subscription_id}": async () => {
		const { subscription } = await subscribe();
		return {
			path: `/v1/subscriptions/${subscription.id}`,
			body: { agent_instance_ids: [uniqueKey()] },
			records: "subscription",
		};
	},
	"POST /v1/subscriptions/{subscription_id}/cancel": async () => ({
		path: `/v1/subscriptions/${(await subscribe()).subscription.id}/cancel`,
		records: "subscription",
	}),
	"POST /v1/invoices/generate": async () => ({
		path: "/v1/invoices/generate",
		body: { billing_period: currentPeriod(), account_id: (await subscribe()).account.id },
		records: "invoice",
	}),
	"POST /v1/invoices/{invoice_id}/pay": async () => ({
		path: `/v1/invoices/${(await openInvoice()).id}/pay`,
		records: "invoice",
	}),
	"POST /v1/invoices/{invoice_id}/void": async () => ({
		path: `/v1/invoices/${(await openInvoice()).id}/void`,
		records: "invoice",
	}),
	"POST /v1/invoices/{invoice_id}/credit-notes": async () => ({
		path: `/v1/invoices/${(await openInvoice()).id}/credit-notes`,
		body: { amount: 1, reason: "billing_error" },
		records: "credit_note",
	}),
	"POST /v1/invoices/{invoice_id}/lines": async () => ({
		path: `/v1/invoices/${(await computeInvoice()).id}/lines`,
		body: { description: "Onboarding", amount: 5 },
		records: "invoice",
	}),
	"POST /v1/invoices/{invoice_id}/finalize": async () => ({
		path: `/v1/invoices/${(await computeInvoice()).id}/finalize`,
		records: "invoice",
	}),
	"POST /v1/alerts": async () => {
		const { subscription } = await subscribe();
		return {
			path: "/v1/alerts",
			body: { subscription_id: subscription.id, metric: "calls", threshold: 100 },
			records: "alert",
		};
	},
	"DELETE /v1/alerts/{alert_id}": async () => {
		const { subscription } = await subscribe();
		const alert = await post("/v1/alerts", {
			subscription_id: subscription.id,
			metric: "calls",
			threshold: 100,
		});
		return { path: `/v1/alerts/${alert.body.id}`, records: "alert" };
	},
	"POST /v1/coupons": async () => ({
		path: "/v1/coupons",
		body: { code: `C${crypto.randomUUID().slice(0, 8)}`, percent_off: 20, duration: "once" },
		records: "coupon",
	}),
	"DELETE /v1/coupons/{coupon_id}": async () => {
		const coupon = await post("/v1/coupons", {
			code: `C${crypto.randomUUID().slice(0, 8)}`,
			percent_off: 10,
			duration: "forever",
		});
		return { path: `/v1/coupons/${coupon.body.id}`, records: "coupon" };
	},
	"POST /v1/subscriptions/{subscription_id}/discounts": async () => {
		const { subscription } = await subscribe();
		const coupon = await post("/v1/coupons", {
			code: `C${crypto.randomUUID().slice(0, 8)}`,
			percent_off: 10,
			duration: "once",
		});
		return {
			path: `/v1/subscriptions/${subscription.id}/discounts`,
			body: { coupon_id: coupon.body.id },
			records: "discount",
		};
	},
	"POST /v1/webhooks": async () => ({
		path: "/v1/webhooks",
		body: { url: "https://receiver.example.com/hooks", events: ["invoice.created"] },
		records: "webhook_endpoint",
	}),
	"PATCH /v1/webhooks/{webhook_id}": async () => ({
		path: `/v1/webhooks/${(await createEndpoint()).id}`,
		body: { description: "Billing system" },
		records: "webhook_endpoint",
	}),
	"DELETE /v1/webhooks/{webhook_id}": async () => ({
		path: `/v1/webhooks/${(await createEndpoint()).id}`,
		records: "webhook_endpoint",
	}),
	"POST /v1/webhooks/test": async () => {
		stubReceiver();
		return {
			path: "/v1/webhooks/test",
			body: { webhook_id: (await createEndpoint()).id, event: "invoice.paid" },
			records: "webhook_delivery",
		};
	},
	"POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": async () => {
		const { endpoint, deliveryId } = await testDelivery();
		captureQueue();
		return {
			path: `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`,
			records: "webhook_delivery",
		};
	},
};

async function stateChangingRoutes(): Promise<string[]> {
	const document = (await get("/v1/openapi.json", { key: null })).body as {
		paths: Record<string, Record<string, unknown>>;
	};
	return Object.entries(document.paths).flatMap(([path, operations]) =>
		Object.keys(operations)
			.filter((method) => ["post", "patch", "delete"].includes(method))
			.map((method) => `${method.toUpperCase()} ${path}`)
			.filter((route) => !EXEMPT.some((pattern) => pattern.test(route))),
	);
}

async function recordsOfRequest(requestId: string) {
	const { results } = await env.DB.prepare("SELECT resource_type FROM audit_records WHERE request_id = ?")
		.bind(requestId)
		.all<{ resource_type: string }>();
	return results.map((r) => r.resource_type);
}

describe("every state-changing route writes an audit record", async () => {
	const routes = await stateChangingRoutes();

	it("has an example call for each POST, PATCH and DELETE of the OpenAPI document", () => {
		const missing = routes.filter((route) => !(route in EXAMPLES));
		expect(missing, "add an example call for these routes to test/audit/coverage.test.ts").toEqual([]);
		expect(routes.length).toBeGreaterThan(20);
	});

	it.each(routes.filter((route) => route in EXAMPLES))("%s", async (route) => {
		const example = await (EXAMPLES[route] as () => Promise<Example>)();
		const method = route.split(" ")[0] as string;
		const requestId = `req-coverage-${crypto.randomUUID()}`;
		const response = await call(method, example.path, {
			body: example.body ?? (method === "POST" ? {} : undefined),
			headers: { "X-Request-Id": requestId },
		});
		expect(response.status, JSON.stringify(response.body)).toBeGreaterThanOrEqual(200);
		expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
		const records = await recordsOfRequest(requestId);
		expect(records.length, `${route} wrote no audit record`).toBeGreaterThan(0);
		expect(records).toContain(example.records);
	});

	it("a read-write key's writes are recorded as that key", async () => {
		const key = await createKey("read-write");
		const requestId = `req-coverage-${crypto.randomUUID()}`;
		await call("POST", "/v1/agents", {
			key,
			body: { name: "B", type: "custom" },
			headers: { "X-Request-Id": requestId },
		});
		expect(await recordsOfRequest(requestId)).toEqual(["agent"]);
	});
});
