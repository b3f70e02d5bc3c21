import {
	createExecutionContext,
	createMessageBatch,
	getQueueResult,
	runDurableObjectAlarm,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accumulatorName, accumulatorStub } from "../../src/durable-objects/usage-accumulator/handle";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { dispatchOutbox } from "../../src/webhooks/dispatch";
import type { WebhookMessage } from "../../src/webhooks/messages";
import type { WebhookEventKind } from "../../src/webhooks/outbox";
import { createAccount, createKey, post } from "../helpers";
import { MANUAL_COLLECTION } from "../invoicing/fixtures";
import { captureQueue, createEndpoint, deliveriesOf, stubReceiver } from "./fixtures";

// End to end through the operations that emit events (subscriptions, outcomes, invoices): the change writes its
// outbox row, the dispatch queues a delivery, the Worker's queue handler posts it to the receiver.

const worker: ExportedHandler<Env> = entry;

afterEach(() => {
	vi.restoreAllMocks();
});

/**
 * The emitting routes dispatch after responding (waitUntil), the accumulators when they flush; dispatching here
 * too is harmless and makes the wait deterministic. Returns the queued first attempts for the endpoint.
 */
async function queuedFor(queue: ReturnType<typeof captureQueue>, endpointId: string, count: number) {
	for (let round = 0; round < 50; round++) {
		await dispatchOutbox(env);
		const ids = new Set((await deliveriesOf(endpointId)).map((d) => d.id));
		const messages = queue.sent.map((m) => m.body).filter((m) => ids.has(m.deliveryId));
		if (ids.size >= count && messages.length >= count) return messages;
		await scheduler.wait(20);
	}
	throw new Error(`fewer than ${count} deliveries for ${endpointId}`);
}

async function deliver(messages: WebhookMessage[]) {
	const batch = createMessageBatch<WebhookMessage>(
		"webhook-deliveries",
		messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
	);
	const ctx = createExecutionContext();
	await worker.queue?.(batch as MessageBatch, env, ctx);
	expect((await getQueueResult(batch, ctx)).explicitAcks).toHaveLength(messages.length);
}

async function subscribedAccount(agentKey: string) {
	const account = await createAccount();
	const plan = await post("/v1/pricing/rate-plans", {
		name: "Outcome share",
		currency: "USD",
		base_fee: 25,
		charges: [
			{
				metric: "resolutions",
				source: { kind: "outcome", type: "resolved", aggregate: "count" },
				model: "per_unit",
				unit_price: 2,
			},
		],
	});
	expect(plan.status, JSON.stringify(plan.body)).toBe(201);
	const subscription = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.body.id,
		agent_instance_ids: [agentKey],
	});
	expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
	return { account, planId: plan.body.id as string, subscriptionId: subscription.body.id as string };
}

function receivedOf(receiver: ReturnType<typeof stubReceiver>, kind: WebhookEventKind) {
	return receiver.received.filter((r) => r.json.event === kind).map((r) => r.json);
}

describe("events from the API's operations", () => {
	it("subscription.created when a subscription is created", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["subscription.created"] });
		const { account, planId, subscriptionId } = await subscribedAccount("bot-sub-created");

		await deliver(await queuedFor(queue, endpoint.id, 1));
		expect(receivedOf(receiver, "subscription.created")).toEqual([
			{
				id: expect.stringMatching(/^evt_/),
				event: "subscription.created",
				timestamp: expect.any(String),
				data: {
					subscription_id: subscriptionId,
					account_id: account.id,
					rate_plan_id: planId,
					rate_plan_version: 1,
					pending_rate_plan_id: null,
					pending_plan_change: null,
					agent_instance_ids: ["bot-sub-created"],
					status: "active",
					billing_currency: "USD",
				},
			},
		]);
	});

	it("outcome.completed when an outcome is recorded", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["outcome.completed"] });
		const { account, subscriptionId } = await subscribedAccount("bot-outcome");
		const sdkKey = await createKey("sdk");
		const outcome = await post(
			"/v1/outcomes",
			{ agent_key: "bot-outcome", outcome_type: "resolved", value: 3.5 },
			{ key: sdkKey },
		);
		expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
		// The accumulator writes its outbox rows when it flushes; run its alarm rather than wait for it.
		await runDurableObjectAlarm(accumulatorStub(env, accumulatorName("live", { subscriptionId })));

		await deliver(await queuedFor(queue, endpoint.id, 1));
		expect(receivedOf(receiver, "outcome.completed")[0]?.data).toEqual({
			outcome_id: outcome.body.id,
			agent_key: "bot-outcome",
			outcome_type: "resolved",
			value: 3.5,
			subscription_id: subscriptionId,
			account_id: account.id,
			timestamp: outcome.body.timestamp,
		});
	});

	it("invoice.created, then invoice.paid and payment.successful when it is paid", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({
			events: ["invoice.created", "invoice.paid", "payment.successful"],
		});
		const { account, subscriptionId } = await subscribedAccount("bot-invoice");
		const period = new Date().toISOString().slice(0, 7);

		const generated = await post("/v1/invoices/generate", { billing_period: period, account_id: account.id });
		expect(generated.status, JSON.stringify(generated.body)).toBe(201);
		const [invoice] = generated.body.invoices;
		await deliver(await queuedFor(queue, endpoint.id, 1));
		// No usage yet: the base fee alone, $25.
		expect(receivedOf(receiver, "invoice.created")[0]?.data).toEqual({
			invoice_id: invoice.id,
			account_id: account.id,
			subscription_id: subscriptionId,
			billing_period: period,
			amount: 25,
			currency: "USD",
			status: "open",
			collection: MANUAL_COLLECTION,
		});

		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-1" });
		expect(paid.status, JSON.stringify(paid.body)).toBe(200);
		const all = await queuedFor(queue, endpoint.id, 3);
		await deliver(all.slice(1));
		expect(receivedOf(receiver, "invoice.paid")[0]?.data).toMatchObject({
			invoice_id: invoice.id,
			amount: 25,
			status: "paid",
			paid_at: paid.body.paid_at,
		});
		expect(receivedOf(receiver, "payment.successful")[0]?.data).toEqual({
			payment_id: expect.stringMatching(/^pay_/),
			invoice_id: invoice.id,
			account_id: account.id,
			amount: 25,
			currency: "USD",
			kind: "payment",
			paid_at: paid.body.paid_at,
		});
	});
});
