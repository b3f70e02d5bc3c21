import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, post } from "../helpers";
import { captureQueue, createEndpoint } from "./fixtures";

// An API request that writes outbox rows delivers them itself once it has answered: no handler has to remember
// it, and nothing waits for the cron sweep. Nothing here calls dispatchOutbox.

afterEach(() => {
	vi.restoreAllMocks();
});

/** The events the endpoint has deliveries of, once `count` have appeared (the dispatch runs after the answer). */
async function deliveredKinds(endpointId: string, count: number): Promise<string[]> {
	let kinds: string[] = [];
	for (let round = 0; round < 100; round++) {
		const { results } = await env.DB.prepare(
			`SELECT e.event FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
			WHERE d.endpoint_id = ? ORDER BY e.created_at, e.id`,
		)
			.bind(endpointId)
			.all<{ event: string }>();
		kinds = results.map((r) => r.event);
		if (kinds.length >= count) return kinds;
		await scheduler.wait(10);
	}
	return kinds;
}

describe("outbox dispatch after a write", () => {
	it("queues the deliveries of what a subscription, an invoice and its void wrote", async () => {
		captureQueue();
		const endpoint = await createEndpoint({
			events: ["subscription.created", "invoice.created", "invoice.voided"],
		});
		const account = await createAccount();
		const plan = await post("/v1/pricing/rate-plans", {
			name: "Base",
			currency: "USD",
			base_fee: 10,
			charges: [],
		});
		expect(plan.status, JSON.stringify(plan.body)).toBe(201);
		const subscription = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.body.id,
			agent_instance_ids: ["bot-dispatch"],
		});
		expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
		expect(await deliveredKinds(endpoint.id, 1)).toEqual(["subscription.created"]);

		const period = new Date().toISOString().slice(0, 7);
		const generated = await post("/v1/invoices/generate", { billing_period: period, account_id: account.id });
		expect(generated.status, JSON.stringify(generated.body)).toBe(201);
		expect(await deliveredKinds(endpoint.id, 2)).toEqual(["subscription.created", "invoice.created"]);

		// Voiding wrote its event to the outbox but left it for the sweep; it is delivered at once too now.
		const voided = await post(`/v1/invoices/${generated.body.invoices[0].id}/void`);
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(await deliveredKinds(endpoint.id, 3)).toEqual([
			"subscription.created",
			"invoice.created",
			"invoice.voided",
		]);
	});

	it("queues the deliveries of invoices stored as one group", async () => {
		captureQueue();
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		const plan = await post("/v1/pricing/rate-plans", {
			name: "Base",
			currency: "USD",
			base_fee: 5,
			charges: [],
		});
		for (const key of ["bot-group-a", "bot-group-b"]) {
			const account = await createAccount();
			const subscription = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.body.id,
				agent_instance_ids: [key],
			});
			expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
		}
		const period = new Date().toISOString().slice(0, 7);
		const generated = await post("/v1/invoices/generate", { billing_period: period });
		expect(generated.status, JSON.stringify(generated.body)).toBe(201);
		expect(generated.body.invoices.length).toBeGreaterThanOrEqual(2);
		const kinds = await deliveredKinds(endpoint.id, generated.body.invoices.length);
		expect(kinds).toEqual(generated.body.invoices.map(() => "invoice.created"));
	});
});
