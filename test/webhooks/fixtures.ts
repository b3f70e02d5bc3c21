import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { database } from "../../src/db/client";
import { newId } from "../../src/lib/ids";
import { type DeliveryOptions, handleWebhookBatch } from "../../src/webhooks/consumer";
import { dispatchOutbox } from "../../src/webhooks/dispatch";
import type { WebhookMessage } from "../../src/webhooks/messages";
import { outboxInsert, type WebhookEventKind } from "../../src/webhooks/outbox";
import { ADMIN_KEY, post } from "../helpers";
import { madeUpEvents } from "../support/webhook-payloads";

export const RECEIVER_URL = "https://receiver.example.com/hooks";

export interface CreatedEndpoint {
	id: string;
	url: string;
	events: string[];
	description: string | null;
	status: "enabled" | "disabled";
	secret: string;
	created_at: string;
}

export async function createEndpoint(
	overrides: Record<string, unknown> = {},
	key: string = ADMIN_KEY,
): Promise<CreatedEndpoint> {
	const response = await post(
		"/v1/webhooks",
		{ url: RECEIVER_URL, events: ["invoice.created"], ...overrides },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as CreatedEndpoint;
}

export interface ReceivedRequest {
	url: string;
	headers: Record<string, string>;
	body: string;
	json: any;
}

type Answer = (request: ReceivedRequest, signal: AbortSignal | undefined) => Response | Promise<Response>;

/**
 * Stands in for the receivers: every outbound fetch of the Worker lands here and nothing reaches the network.
 * `answer` decides the response per request (by default 200).
 */
export function stubReceiver(answer: Answer = () => new Response("ok")) {
	const received: ReceivedRequest[] = [];
	let current = answer;
	const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
		const request = new Request(input as RequestInfo, init as RequestInit);
		const body = await request.text();
		const record: ReceivedRequest = {
			url: request.url,
			headers: Object.fromEntries(request.headers),
			body,
			json: JSON.parse(body),
		};
		received.push(record);
		return current(record, (init as RequestInit | undefined)?.signal ?? undefined);
	});
	return {
		received,
		spy,
		answerWith(next: Answer) {
			current = next;
		},
	};
}

/** An answer that never comes: the request only ends when its timeout signal aborts it. */
export const hang: Answer = (_request, signal) =>
	new Promise<Response>((_resolve, reject) => {
		signal?.addEventListener("abort", () => reject(signal.reason));
	});

export interface SentMessage {
	body: WebhookMessage;
	delaySeconds: number | undefined;
}

/** Captures what the Worker queues instead of letting the local queue deliver it on real timers. */
export function captureQueue() {
	const sent: SentMessage[] = [];
	// What a real queue answers; nothing here reads it.
	const metadata = { metrics: { backlogCount: 0, backlogBytes: 0 } };
	vi.spyOn(env.WEBHOOK_QUEUE, "send").mockImplementation(async (body, options) => {
		sent.push({ body, delaySeconds: options?.delaySeconds });
		return { metadata };
	});
	vi.spyOn(env.WEBHOOK_QUEUE, "sendBatch").mockImplementation(async (messages) => {
		for (const m of messages) sent.push({ body: m.body, delaySeconds: m.delaySeconds });
		return { metadata };
	});
	return {
		sent,
		/** Everything sent since the last call. */
		take(): SentMessage[] {
			return sent.splice(0, sent.length);
		},
	};
}

/** Runs the consumer on these messages as one batch and returns the queue's verdict. */
export async function consume(messages: WebhookMessage[], options: DeliveryOptions = {}) {
	const batch = createMessageBatch<WebhookMessage>(
		"webhook-deliveries",
		messages.map((body, i) => ({
			id: `msg-${i}-${crypto.randomUUID()}`,
			timestamp: new Date(),
			attempts: 1,
			body,
		})),
	);
	await handleWebhookBatch(batch, env, options);
	return getQueueResult(batch, createExecutionContext());
}

/** Records an outbox event the way the emitting operations do (outboxInsert in a batch); returns its id. */
export async function emitEvent(
	kind: WebhookEventKind,
	data: Record<string, unknown>,
	environment: "live" | "test" = "live",
): Promise<string> {
	const db = database(env.DB);
	const id = newId("evt");
	// Made-up data, not what an operation emits: the schema check of test/setup.ts leaves it alone.
	madeUpEvents.add(id);
	await db.batch([outboxInsert(db, { environment }, kind, data, id)]);
	return id;
}

export interface DeliveryRow {
	id: string;
	environment: string;
	endpoint_id: string;
	event_id: string;
	event: string;
	status: "pending" | "succeeded" | "failed";
	attempts: number;
	last_status_code: number | null;
	last_error: string | null;
	next_attempt_at: string | null;
	created_at: string;
	delivered_at: string | null;
}

export async function deliveriesOf(endpointId: string): Promise<DeliveryRow[]> {
	const { results } = await env.DB.prepare(
		"SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id",
	)
		.bind(endpointId)
		.all<DeliveryRow>();
	return results;
}

export async function deliveryRow(id: string): Promise<DeliveryRow> {
	const row = await env.DB.prepare("SELECT * FROM webhook_deliveries WHERE id = ?")
		.bind(id)
		.first<DeliveryRow>();
	if (!row) throw new Error(`no delivery ${id}`);
	return row;
}

/**
 * Runs the outbox fan-out and returns the queued first attempts for this endpoint (earlier tests of the file may
 * have endpoints subscribed to the same kinds).
 */
export async function dispatchFor(
	queue: ReturnType<typeof captureQueue>,
	endpointId: string,
): Promise<WebhookMessage[]> {
	await dispatchOutbox(env);
	const ids = new Set((await deliveriesOf(endpointId)).map((d) => d.id));
	return queue
		.take()
		.map((m) => m.body)
		.filter((m) => ids.has(m.deliveryId));
}
