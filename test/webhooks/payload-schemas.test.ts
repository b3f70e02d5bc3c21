/**
 * Every kind of webhook delivery, produced by the operations that emit it (and by POST /v1/webhooks/test), checked
 * against the payload schema the OpenAPI document publishes for that kind. test/setup.ts checks the events of
 * every other test file the same way when it ends; this file makes sure each kind, and each status a kind can
 * carry, is among them.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { WEBHOOK_EVENT_KINDS } from "../../src/webhooks/outbox";
import { createAccount, patch, post } from "../helpers";
import { currentPeriod, customer, generateOne, instanceKey, sdkKey, subscribe } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";
import { storedDeliveryBodies, webhookPayloadChecker } from "../support/webhook-payloads";
import { createEndpoint, stubReceiver } from "./fixtures";

afterEach(() => {
	vi.restoreAllMocks();
});

const plan = {
	base_fee: 25,
	charges: [
		{
			metric: "resolutions",
			source: { kind: "outcome", type: "resolved", aggregate: "count" },
			model: "per_unit",
			unit_price: 2,
		},
	],
};

/** Runs every operation that emits an event, in the ways that change what its data carries. */
async function emitEveryKind() {
	// subscription.created, .updated (instances, then a cancellation at period end), outcome.completed and
	// alert.triggered.
	const { account, subscription, instances } = await customer(plan);
	const [agentKey] = instances as [string];
	expect(
		(await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: [agentKey, instanceKey()] }))
			.status,
	).toBe(200);
	expect((await post("/v1/alerts", { subscription_id: subscription.id, threshold: 26 })).status).toBe(201);
	// A margin alert: the action's cost of 40 puts the margin of the period's revenue below 50%.
	expect(
		(await post("/v1/alerts", { subscription_id: subscription.id, type: "margin", threshold: 50 })).status,
	).toBe(201);
	const costly = await post(
		"/v1/actions",
		{ agent_key: agentKey, action_type: "gpu_job", metadata: { cost: 40 } },
		{ key: await sdkKey() },
	);
	expect(costly.status, JSON.stringify(costly.body)).toBe(201);
	const outcome = await post(
		"/v1/outcomes",
		{ agent_key: agentKey, outcome_type: "resolved", value: 3.5 },
		{ key: await sdkKey() },
	);
	expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
	await subscriptionAccumulator(subscription.id).flush();

	// invoice.created (open), invoice.paid and payment.successful.
	const invoice = await generateOne(currentPeriod(), account.id);
	expect(invoice.status).toBe("open");
	expect((await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-1" })).status).toBe(200);
	expect((await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true })).status).toBe(
		200,
	);

	// invoice.created paid at once by credits (and its invoice.paid), invoice.voided, subscription.cancelled.
	const prepaid = await createAccount();
	expect((await post(`/v1/accounts/${prepaid.id}/credit-grants`, { amount: 100 })).status).toBe(201);
	const prepaidPlan = await post("/v1/pricing/rate-plans", {
		name: "Flat",
		currency: "USD",
		base_fee: 30,
		charges: [],
	});
	const flat = await subscribe(prepaid.id, prepaidPlan.body.id, [instanceKey()]);
	expect((await generateOne(currentPeriod(), prepaid.id)).status).toBe("paid");
	const second = await subscribe(prepaid.id, prepaidPlan.body.id, [instanceKey()]);
	const other = await createAccount();
	const open = await subscribe(other.id, prepaidPlan.body.id, [instanceKey()]);
	const toVoid = await generateOne(currentPeriod(), other.id);
	expect((await post(`/v1/invoices/${toVoid.id}/void`)).status).toBe(200);
	for (const id of [flat.id, second.id, open.id]) {
		expect((await post(`/v1/subscriptions/${id}/cancel`, {})).status).toBe(200);
	}
}

describe("webhook deliveries against the OpenAPI document's payload schemas", () => {
	it("every kind an operation emits, with each status it can carry, matches its published schema", async () => {
		await emitEveryKind();
		const check = await webhookPayloadChecker();
		const bodies = (await storedDeliveryBodies()).map(({ body }) => JSON.parse(body));

		const seen = new Set(
			bodies.map((body) => `${body.event} ${body.data.status ?? body.data.type ?? ""}`.trim()),
		);
		for (const kind of [
			"invoice.created open",
			"invoice.created paid",
			"invoice.paid paid",
			"invoice.voided void",
			"payment.successful",
			"outcome.completed",
			"subscription.created active",
			"subscription.updated active",
			"subscription.cancelled cancelled",
			"alert.triggered usage",
			"alert.triggered margin",
		]) {
			expect(seen, kind).toContain(kind);
		}
		for (const body of bodies) expect(check(body), JSON.stringify(body)).toEqual([]);
	});

	it("every sample POST /v1/webhooks/test sends matches its published schema", async () => {
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: [...WEBHOOK_EVENT_KINDS] });
		const check = await webhookPayloadChecker();
		for (const event of WEBHOOK_EVENT_KINDS) {
			const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event });
			expect(response.status, JSON.stringify(response.body)).toBe(200);
		}
		expect(receiver.received.map((request) => request.json.event)).toEqual([...WEBHOOK_EVENT_KINDS]);
		for (const { json } of receiver.received) {
			expect(json.test).toBe(true);
			expect(check(json), JSON.stringify(json)).toEqual([]);
		}
	});

	const valid = {
		id: "evt_01jd0000000000000000000000",
		event: "invoice.created",
		timestamp: "2026-11-21T10:00:00.000Z",
		data: {
			invoice_id: "inv_1",
			account_id: "acct_1",
			subscription_id: "sub_1",
			billing_period: "2026-11",
			amount: 12.5,
			currency: "USD",
			status: "open",
			collection: {
				provider: "manual",
				status: "none",
				attempts: 0,
				next_attempt_at: null,
				payment_intent_id: null,
				checkout_session_id: null,
				payment_url: null,
				last_error: null,
			},
		},
	};
	it.each([
		["a status the schema does not list", { data: { ...valid.data, status: "refunded" } }, "/data/status"],
		["a missing field", { data: { ...valid.data, amount: undefined } }, "amount"],
		["a field of the wrong type", { data: { ...valid.data, amount: "12.50" } }, "/data/amount"],
		["an undeclared field", { data: { ...valid.data, amount_paid: 0 } }, "/data/amount_paid"],
		["a timestamp that is no date-time", { timestamp: "yesterday" }, "/timestamp"],
		["a kind the document does not publish", { event: "invoice.refunded" }, "invoice.refunded"],
	])("refuses a body with %s", async (_, change, mentioned) => {
		const check = await webhookPayloadChecker();
		expect(check(valid)).toEqual([]);
		const problems = check(JSON.parse(JSON.stringify({ ...valid, ...change })));
		expect(problems.join("\n")).toContain(mentioned);
	});
});
