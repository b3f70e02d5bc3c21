import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import type { WebhookMessage } from "../../src/webhooks/messages";
import { MAX_QUEUE_DELAY_SECONDS, RETRY_DELAYS_MS } from "../../src/webhooks/schedule";
import { ATTEMPT_TIMEOUT_MS } from "../../src/webhooks/send";
import { get } from "../helpers";
import {
	captureQueue,
	consume,
	createEndpoint,
	deliveryRow,
	dispatchFor,
	emitEvent,
	hang,
	stubReceiver,
} from "./fixtures";

// Called as the runtime calls it, with an execution context, whatever parameters the handlers declare.
const worker: ExportedHandler<Env> = entry;

afterEach(() => {
	vi.restoreAllMocks();
});

const HOUR_S = 3600;

/** An endpoint, one event for it, and the queued first attempt of its delivery. */
async function pendingDelivery(queue: ReturnType<typeof captureQueue>) {
	const endpoint = await createEndpoint({ events: ["invoice.created"] });
	await emitEvent("invoice.created", { invoice_id: "inv_1", amount: 10, currency: "USD" });
	const [first, ...others] = await dispatchFor(queue, endpoint.id);
	expect(others).toEqual([]);
	expect(first).toMatchObject({ attempt: 1 });
	return { endpoint, message: first as WebhookMessage };
}

describe("a successful attempt", () => {
	it("acks the message and records the delivery as succeeded", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver(() => new Response(null, { status: 204 }));
		const { message } = await pendingDelivery(queue);

		const result = await consume([message]);
		expect(result.explicitAcks).toHaveLength(1);
		expect(result.retryMessages).toEqual([]);
		expect(receiver.received).toHaveLength(1);
		const row = await deliveryRow(message.deliveryId);
		expect(queue.take()).toEqual([]);
		expect(row).toMatchObject({ status: "succeeded", attempts: 1, last_status_code: 204, last_error: null });
		expect(row.delivered_at).not.toBeNull();
	});

	it("gives each attempt 30 seconds, counted from the start of the request", async () => {
		const queue = captureQueue();
		stubReceiver();
		const timeout = vi.spyOn(AbortSignal, "timeout");
		const { message } = await pendingDelivery(queue);
		await consume([message]);
		expect(ATTEMPT_TIMEOUT_MS).toBe(30_000);
		expect(timeout).toHaveBeenCalledWith(30_000);
	});
});

const failures = {
	"a 500 answer": { answer: () => new Response("boom", { status: 500 }), statusCode: 500, error: /HTTP 500/ },
	"a timeout": { answer: hang, statusCode: null, error: /No answer within 0\.05 s/ },
	"a network error": {
		answer: () => {
			throw new TypeError("Network connection lost.");
		},
		statusCode: null,
		// The log says what happened in fixed words, never the runtime's own error text.
		error: /^Could not connect to the receiver\.$/,
	},
	"a redirect (not followed)": {
		answer: () => new Response(null, { status: 301, headers: { Location: "https://elsewhere.test/" } }),
		statusCode: 301,
		error: /HTTP 301/,
	},
};

describe.each(Object.entries(failures))("after %s", (_, failure) => {
	it("retries after 1 min, 5 min, 15 min, 1 h, 6 h and 24 h (in 12 h hops), then fails", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver(failure.answer);
		const { message: first } = await pendingDelivery(queue);
		const options = { timeoutMs: 50 };

		let message = first;
		// Attempts 1–5: the next attempt is queued with exactly the scheduled delay.
		for (const [index, delaySeconds] of [60, 300, 900, HOUR_S, 6 * HOUR_S].entries()) {
			const attempt = index + 1;
			const before = Date.now();
			const result = await consume([message], options);
			expect(result.explicitAcks).toHaveLength(1);
			const row = await deliveryRow(first.deliveryId);
			expect(row).toMatchObject({
				status: "pending",
				attempts: attempt,
				last_status_code: failure.statusCode,
			});
			expect(row.last_error).toMatch(failure.error);
			const sent = queue.take();
			expect(sent).toHaveLength(1);
			expect(sent[0]?.delaySeconds).toBe(delaySeconds);
			expect(sent[0]?.body).toMatchObject({ deliveryId: first.deliveryId, attempt: attempt + 1 });
			const dueAt = sent[0]?.body.dueAt as number;
			expect(dueAt - before).toBeGreaterThanOrEqual(delaySeconds * 1000);
			expect(dueAt - Date.now()).toBeLessThanOrEqual(delaySeconds * 1000);
			expect(Date.parse(row.next_attempt_at as string)).toBe(dueAt);
			// The queue brings it back at its due time (simulated: the test does not wait).
			message = { ...(sent[0]?.body as WebhookMessage), dueAt: Date.now() };
		}

		// Attempt 6 fails: attempt 7 is due in 24 h, more than one queue delay allows, so it goes in hops.
		await consume([message], options);
		let [sent] = queue.take();
		expect(sent?.delaySeconds).toBe(MAX_QUEUE_DELAY_SECONDS);
		expect(sent?.body.attempt).toBe(7);
		const dueAt = sent?.body.dueAt as number;
		expect(dueAt - Date.now()).toBeGreaterThan(24 * HOUR_S * 1000 - 60_000);
		expect((await deliveryRow(first.deliveryId)).attempts).toBe(6);

		// First hop arrives 12 h early: nothing is sent to the receiver, the message goes on for the rest.
		const requestsBefore = receiver.received.length;
		expect((await consume([sent?.body as WebhookMessage], options)).explicitAcks).toHaveLength(1);
		[sent] = queue.take();
		expect(sent?.body).toEqual({ deliveryId: first.deliveryId, attempt: 7, dueAt });
		expect(sent?.delaySeconds).toBeLessThanOrEqual(MAX_QUEUE_DELAY_SECONDS);
		// 12 hours later (simulated by moving the due time closer): the second hop, exactly 12 h.
		await consume([{ ...message, attempt: 7, dueAt: Date.now() + 12 * HOUR_S * 1000 }], options);
		[sent] = queue.take();
		expect(sent?.delaySeconds).toBe(MAX_QUEUE_DELAY_SECONDS);
		expect(receiver.received.length).toBe(requestsBefore);
		expect((await deliveryRow(first.deliveryId)).attempts).toBe(6);

		// Due now: attempt 7, the last, fails, and the delivery is failed with nothing queued.
		await consume([{ ...message, attempt: 7, dueAt: Date.now() }], options);
		expect(queue.take()).toEqual([]);
		expect(receiver.received.length).toBe(requestsBefore + 1);
		const row = await deliveryRow(first.deliveryId);
		expect(row).toMatchObject({ status: "failed", attempts: 7, next_attempt_at: null, delivered_at: null });
		expect(row.last_error).toMatch(failure.error);
	});
});

describe("the retry schedule", () => {
	it("is 1 min, 5 min, 15 min, 1 h, 6 h, 24 h", () => {
		expect(RETRY_DELAYS_MS.map((ms) => ms / 60_000)).toEqual([1, 5, 15, 60, 360, 1440]);
	});
});

describe("410 Gone", () => {
	it("disables the endpoint and fails the delivery without retrying", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver(() => new Response("gone", { status: 410 }));
		const { endpoint, message } = await pendingDelivery(queue);

		expect((await consume([message])).explicitAcks).toHaveLength(1);
		expect(queue.take()).toEqual([]);
		expect(await deliveryRow(message.deliveryId)).toMatchObject({
			status: "failed",
			attempts: 1,
			last_status_code: 410,
		});
		expect((await get(`/v1/webhooks/${endpoint.id}`)).body.status).toBe("disabled");

		// A disabled endpoint gets nothing new.
		await emitEvent("invoice.created", { invoice_id: "inv_2" });
		expect(await dispatchFor(queue, endpoint.id)).toEqual([]);
		expect(receiver.received).toHaveLength(1);
	});
});

describe("stale and duplicate messages", () => {
	it("sends once when two copies of a message arrive together", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const { message } = await pendingDelivery(queue);
		const result = await consume([message, { ...message }]);
		expect(result.explicitAcks).toHaveLength(2);
		expect(receiver.received).toHaveLength(1);
		expect(await deliveryRow(message.deliveryId)).toMatchObject({ status: "succeeded", attempts: 1 });
	});

	it("drops a message for an attempt already made, a finished delivery or an unknown one", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver(() => new Response(null, { status: 500 }));
		const { message } = await pendingDelivery(queue);
		await consume([message]);
		const [retry] = queue.take();
		expect(receiver.received).toHaveLength(1);

		// The first attempt's message again (a redelivery), and one for a delivery that does not exist.
		const result = await consume([message, { deliveryId: "dlv_unknown", attempt: 1, dueAt: Date.now() }]);
		expect(result.explicitAcks).toHaveLength(2);
		expect(receiver.received).toHaveLength(1);
		expect(queue.take()).toEqual([]);

		receiver.answerWith(() => new Response("ok"));
		await consume([{ ...(retry?.body as WebhookMessage), dueAt: Date.now() }]);
		expect(receiver.received).toHaveLength(2);
		await consume([{ ...(retry?.body as WebhookMessage), dueAt: Date.now() }]);
		expect(receiver.received).toHaveLength(2);
		expect(await deliveryRow(message.deliveryId)).toMatchObject({ status: "succeeded", attempts: 2 });
	});

	it("fails a pending delivery whose endpoint was disabled meanwhile, without sending", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const { endpoint, message } = await pendingDelivery(queue);
		await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ?")
			.bind(endpoint.id)
			.run();
		await consume([message]);
		expect(receiver.received).toEqual([]);
		expect(await deliveryRow(message.deliveryId)).toMatchObject({ status: "failed", attempts: 0 });
	});

	it("asks the queue to retry a message when something unexpected fails", async () => {
		const queue = captureQueue();
		stubReceiver();
		const { message } = await pendingDelivery(queue);
		vi.spyOn(env.DB, "prepare").mockImplementation(() => {
			throw new Error("D1 is unreachable");
		});
		vi.spyOn(console, "error").mockImplementation(() => {});
		const result = await consume([message]);
		expect(result.explicitAcks).toEqual([]);
		expect(result.retryMessages).toMatchObject([{ msgId: expect.any(String) }]);
	});
});

describe("the Worker's queue handler", () => {
	it("hands webhook-deliveries batches to the webhook consumer", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const { message } = await pendingDelivery(queue);
		const batch = createMessageBatch<WebhookMessage>("webhook-deliveries", [
			{ id: "m1", timestamp: new Date(), attempts: 1, body: message },
		]);
		const ctx = createExecutionContext();
		await worker.queue?.(batch as MessageBatch, env, ctx);
		expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m1"]);
		expect(receiver.received).toHaveLength(1);
	});

	it("retries batches of a queue it has no consumer for", async () => {
		vi.spyOn(console, "error").mockImplementation(() => {});
		const batch = createMessageBatch("some-other-queue", [
			{ id: "m1", timestamp: new Date(), attempts: 1, body: {} },
		]);
		const ctx = createExecutionContext();
		await worker.queue?.(batch, env, ctx);
		expect((await getQueueResult(batch, ctx)).retryBatch.retry).toBe(true);
	});
});
