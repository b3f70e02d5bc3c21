import {
	createExecutionContext,
	createMessageBatch,
	createScheduledController,
	getQueueResult,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { dispatchOutbox } from "../../src/webhooks/dispatch";
import type { WebhookMessage } from "../../src/webhooks/messages";
import { createKey, expectError, get, patch } from "../helpers";
import {
	captureQueue,
	createEndpoint,
	deliveriesOf,
	deliveryRow,
	dispatchFor,
	emitEvent,
	RECEIVER_URL,
	stubReceiver,
} from "./fixtures";

// Called as the runtime calls it, with an execution context, whatever parameters the handlers declare.
const worker: ExportedHandler<Env> = entry;

afterEach(() => {
	vi.restoreAllMocks();
});

/** Hands messages to the Worker's own queue handler, as the queue would. */
async function deliverThroughWorker(messages: WebhookMessage[]) {
	const batch = createMessageBatch<WebhookMessage>(
		"webhook-deliveries",
		messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
	);
	const ctx = createExecutionContext();
	await worker.queue?.(batch as MessageBatch, env, ctx);
	return getQueueResult(batch, ctx);
}

async function runCron(cron: string) {
	const ctx = createExecutionContext();
	await worker.scheduled?.(createScheduledController({ cron }), env, ctx);
}

describe("from outbox to receiver", () => {
	it("delivers an event with the contract's data and shows it in the delivery log", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["invoice.created", "outcome.completed"] });
		const data = {
			invoice_id: "inv_01",
			account_id: "acct_01",
			subscription_id: "sub_01",
			billing_period: "2026-10",
			amount: 149.5,
			currency: "USD",
			status: "open",
		};
		const eventId = await emitEvent("invoice.created", data);
		// A kind the endpoint did not subscribe to.
		await emitEvent("subscription.created", { subscription_id: "sub_01" });

		const messages = await dispatchFor(queue, endpoint.id);
		expect(messages).toEqual([
			{ deliveryId: expect.stringMatching(/^dlv_/), attempt: 1, dueAt: expect.any(Number) },
		]);
		expect((await deliverThroughWorker(messages)).explicitAcks).toEqual(["m0"]);

		expect(receiver.received).toHaveLength(1);
		expect(receiver.received[0]?.url).toBe(RECEIVER_URL);
		expect(receiver.received[0]?.json).toEqual({
			id: eventId,
			event: "invoice.created",
			timestamp: expect.any(String),
			data,
		});

		const log = await get(`/v1/webhooks/${endpoint.id}/deliveries`);
		expect(log.status).toBe(200);
		expect(log.body).toEqual({
			deliveries: [
				{
					id: messages[0]?.deliveryId,
					event_id: eventId,
					event: "invoice.created",
					status: "succeeded",
					attempts: 1,
					last_status_code: 200,
					last_error: null,
					next_attempt_at: null,
					created_at: expect.any(String),
					delivered_at: expect.any(String),
				},
			],
			total: 1,
			limit: 20,
			offset: 0,
		});
	});

	it("fans out once, however many dispatch runs overlap", async () => {
		const queue = captureQueue();
		const a = await createEndpoint({ events: ["invoice.paid"] });
		const b = await createEndpoint({ events: ["invoice.paid", "payment.successful"] });
		await emitEvent("invoice.paid", { invoice_id: "inv_2" });
		await Promise.all([dispatchOutbox(env), dispatchOutbox(env), dispatchOutbox(env)]);
		await dispatchOutbox(env);
		expect(await deliveriesOf(a.id)).toHaveLength(1);
		expect(await deliveriesOf(b.id)).toHaveLength(1);
		const ids = [...(await deliveriesOf(a.id)), ...(await deliveriesOf(b.id))].map((d) => d.id);
		const queued = queue.sent.map((m) => m.body.deliveryId).filter((id) => ids.includes(id));
		expect(queued.sort()).toEqual(ids.sort());
	});

	it("gives a disabled endpoint nothing new", async () => {
		const queue = captureQueue();
		const endpoint = await createEndpoint({ events: ["invoice.paid"] });
		await patch(`/v1/webhooks/${endpoint.id}`, { status: "disabled" });
		await emitEvent("invoice.paid", { invoice_id: "inv_3" });
		expect(await dispatchFor(queue, endpoint.id)).toEqual([]);
		expect(await deliveriesOf(endpoint.id)).toEqual([]);
	});
});

describe("environments", () => {
	it("delivers test events only to test endpoints and live events only to live ones", async () => {
		const queue = captureQueue();
		const testAdmin = await createKey("admin", "test");
		const live = await createEndpoint({ events: ["outcome.completed"] });
		const test = await createEndpoint({ events: ["outcome.completed"] }, testAdmin);

		const liveEvent = await emitEvent("outcome.completed", { outcome_id: "out_live" }, "live");
		const testEvent = await emitEvent("outcome.completed", { outcome_id: "out_test" }, "test");
		await dispatchOutbox(env);
		queue.take();

		expect((await deliveriesOf(live.id)).map((d) => d.event_id)).toEqual([liveEvent]);
		expect((await deliveriesOf(test.id)).map((d) => d.event_id)).toEqual([testEvent]);
		expect((await deliveriesOf(test.id))[0]?.environment).toBe("test");

		// Each log is visible only from its own environment.
		const testLog = await get(`/v1/webhooks/${test.id}/deliveries`, { key: testAdmin });
		expect(testLog.body.deliveries.map((d: { event_id: string }) => d.event_id)).toEqual([testEvent]);
		expectError(await get(`/v1/webhooks/${test.id}/deliveries`), 404, "not_found");
		expectError(await get(`/v1/webhooks/${live.id}/deliveries`, { key: testAdmin }), 404, "not_found");
	});
});

describe("GET /v1/webhooks/{webhook_id}/deliveries", () => {
	it("pages newest first", async () => {
		const queue = captureQueue();
		const endpoint = await createEndpoint({ events: ["subscription.updated"] });
		const first = await emitEvent("subscription.updated", { n: 1 });
		const second = await emitEvent("subscription.updated", { n: 2 });
		await dispatchFor(queue, endpoint.id);
		const page = await get(`/v1/webhooks/${endpoint.id}/deliveries?limit=1&offset=1`);
		expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
		expect(page.body.deliveries.map((d: { event_id: string }) => d.event_id)).toEqual([first]);
		const top = await get(`/v1/webhooks/${endpoint.id}/deliveries?limit=1`);
		expect(top.body.deliveries[0]).toMatchObject({ event_id: second, status: "pending", attempts: 0 });
		expect(top.body.deliveries[0].next_attempt_at).toEqual(expect.any(String));
	});

	it("answers 404 for an unknown endpoint and 400 for bad paging", async () => {
		expectError(await get("/v1/webhooks/whk_unknown/deliveries"), 404, "not_found");
		const endpoint = await createEndpoint();
		expectError(await get(`/v1/webhooks/${endpoint.id}/deliveries?limit=101`), 400, "validation_error");
	});

	it("filters by status, and refuses an unknown status", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["subscription.updated"] });
		const delivered = await emitEvent("subscription.updated", { n: 1 });
		const messages = await dispatchFor(queue, endpoint.id);
		await deliverThroughWorker(messages);
		expect(receiver.received).toHaveLength(1);
		const waiting = await emitEvent("subscription.updated", { n: 2 });
		await dispatchFor(queue, endpoint.id);

		const ids = async (status: string) => {
			const page = await get(`/v1/webhooks/${endpoint.id}/deliveries?status=${status}`);
			expect(page.status).toBe(200);
			return [page.body.total, page.body.deliveries.map((d: { event_id: string }) => d.event_id)];
		};
		expect(await ids("succeeded")).toEqual([1, [delivered]]);
		expect(await ids("pending")).toEqual([1, [waiting]]);
		expect(await ids("failed")).toEqual([0, []]);
		expectError(await get(`/v1/webhooks/${endpoint.id}/deliveries?status=done`), 400, "validation_error");
	});
});

describe("GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id}", () => {
	it("answers the delivery with the payload its attempts send", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		const data = { invoice_id: "inv_07", amount: 12.5, currency: "USD" };
		const eventId = await emitEvent("invoice.created", data);
		const messages = await dispatchFor(queue, endpoint.id);
		await deliverThroughWorker(messages);
		const deliveryId = messages[0]?.deliveryId as string;

		const one = await get(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}`);
		expect(one.status).toBe(200);
		expect(one.body).toMatchObject({ id: deliveryId, event_id: eventId, status: "succeeded", attempts: 1 });
		// Exactly what the receiver got.
		expect(one.body.payload).toEqual(receiver.received[0]?.json);
		expect(one.body.payload).toEqual({
			id: eventId,
			event: "invoice.created",
			timestamp: expect.any(String),
			data,
		});
	});

	it("answers 404 for another endpoint's delivery, an unknown one, and another environment's", async () => {
		const queue = captureQueue();
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		const other = await createEndpoint({ events: ["invoice.created"] });
		await emitEvent("invoice.created", { invoice_id: "inv_08" });
		const [message] = await dispatchFor(queue, endpoint.id);
		const deliveryId = message?.deliveryId as string;
		expectError(await get(`/v1/webhooks/${other.id}/deliveries/${deliveryId}`), 404, "not_found");
		expectError(await get(`/v1/webhooks/${endpoint.id}/deliveries/dlv_unknown`), 404, "not_found");
		const testAdmin = await createKey("admin", "test");
		expectError(
			await get(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}`, { key: testAdmin }),
			404,
			"not_found",
		);
		const readOnly = await createKey("read-only");
		expectError(
			await get(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}`, { key: readOnly }),
			403,
			"forbidden",
		);
	});
});

describe("the sweep (cron */5)", () => {
	it("dispatches what nobody dispatched and re-queues deliveries whose message was lost", async () => {
		const queue = captureQueue();
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		// The event is stored but no dispatch runs (as if the Worker stopped right after the change).
		const eventId = await emitEvent("invoice.created", { invoice_id: "inv_lost" });
		await runCron("*/5 * * * *");
		const [delivery] = await deliveriesOf(endpoint.id);
		expect(delivery?.event_id).toBe(eventId);
		expect(queue.take().map((m) => m.body.deliveryId)).toContain(delivery?.id);

		// Its queue message is lost: while not overdue by 5 minutes, the sweep leaves it alone...
		await runCron("*/5 * * * *");
		expect(queue.take().map((m) => m.body.deliveryId)).not.toContain(delivery?.id);
		// ...then queues the next attempt again.
		const sixMinutesAgo = new Date(Date.now() - 6 * 60_000).toISOString();
		await env.DB.prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?")
			.bind(sixMinutesAgo, delivery?.id)
			.run();
		await runCron("*/5 * * * *");
		const requeued = queue.take().filter((m) => m.body.deliveryId === delivery?.id);
		expect(requeued).toEqual([
			{ body: { deliveryId: delivery?.id, attempt: 1, dueAt: expect.any(Number) }, delaySeconds: 0 },
		]);
		expect(Date.parse((await deliveryRow(delivery?.id as string)).next_attempt_at as string)).toBeGreaterThan(
			Date.parse(sixMinutesAgo),
		);
	});

	it("recovers from a failed queue send during dispatch", async () => {
		const queue = captureQueue();
		vi.spyOn(console, "error").mockImplementation(() => {});
		vi.spyOn(env.WEBHOOK_QUEUE, "sendBatch").mockRejectedValueOnce(new Error("queue unavailable"));
		const endpoint = await createEndpoint({ events: ["invoice.paid"] });
		await emitEvent("invoice.paid", { invoice_id: "inv_4" });
		await dispatchOutbox(env);
		const [delivery] = await deliveriesOf(endpoint.id);
		expect(delivery).toMatchObject({ status: "pending", attempts: 0 });
		expect(queue.take()).toEqual([]);

		await env.DB.prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?")
			.bind(new Date(Date.now() - 10 * 60_000).toISOString(), delivery?.id)
			.run();
		await runCron("*/5 * * * *");
		expect(queue.take().map((m) => m.body)).toContainEqual({
			deliveryId: delivery?.id,
			attempt: 1,
			dueAt: expect.any(Number),
		});
	});

	it("leaves alone other crons (the invoicing job is wired separately)", async () => {
		const queue = captureQueue();
		vi.spyOn(console, "error").mockImplementation(() => {});
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		await emitEvent("invoice.created", { invoice_id: "inv_5" });
		await runCron("0 0 * * *");
		expect(await deliveriesOf(endpoint.id)).toEqual([]);
		expect(queue.sent).toEqual([]);
	});
});
