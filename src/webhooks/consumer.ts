import { database } from "../db/client";
import type { Env } from "../env";
import { claimAttempt, failForDisabledEndpoint, loadDeliveryToAttempt, recordAttempt } from "./attempt";
import type { WebhookMessage } from "./messages";
import { receiverUrlRules } from "./receiver-url";
import { enqueueAttempt } from "./schedule";
import { openWebhookSecret } from "./secret-box";
import { ATTEMPT_TIMEOUT_MS, postWebhook } from "./send";

// The consumer of "webhook-deliveries". Each message is one attempt of one delivery. A message is always acked
// once handled: the next attempt is a new message naming attempt n + 1 (a queue retry would redeliver the same
// body, attempt number included). Only an unexpected failure (D1 unreachable…) asks the queue to retry the message.

/** A message arriving this close to its due time is treated as due, rather than hopping for a second. */
const DUE_TOLERANCE_MS = 1_000;
const RETRY_ON_ERROR_SECONDS = 30;

export interface DeliveryOptions {
	/** The per-attempt timeout; tests shorten it. */
	timeoutMs?: number;
}

export type MessageResult = "delivered" | "failed" | "stale" | "hopped" | "endpoint_disabled";

export async function handleWebhookBatch(
	batch: MessageBatch<WebhookMessage>,
	env: Env,
	options: DeliveryOptions = {},
): Promise<void> {
	await Promise.all(
		batch.messages.map(async (message) => {
			try {
				await processWebhookMessage(env, message.body, options);
				message.ack();
			} catch (error) {
				console.error(
					JSON.stringify({
						at: "webhook-consumer",
						messageId: message.id,
						body: message.body,
						error: String(error),
					}),
				);
				message.retry({ delaySeconds: RETRY_ON_ERROR_SECONDS });
			}
		}),
	);
}

export async function processWebhookMessage(
	env: Env,
	message: WebhookMessage,
	options: DeliveryOptions = {},
): Promise<MessageResult> {
	if (!isWebhookMessage(message)) {
		console.error(JSON.stringify({ at: "webhook-consumer", error: "malformed message", message }));
		return "stale";
	}
	const db = database(env.DB);
	const delivery = await loadDeliveryToAttempt(db, message.deliveryId);
	// Gone (its endpoint deleted), finished, or already past this attempt: a duplicate or an outdated copy.
	if (delivery?.status !== "pending" || delivery.attempts !== message.attempt - 1) return "stale";

	const now = Date.now();
	if (message.dueAt - now > DUE_TOLERANCE_MS) {
		await enqueueAttempt(env, message, now);
		return "hopped";
	}
	if (delivery.endpoint.status !== "enabled") {
		await failForDisabledEndpoint(db, delivery.id, delivery.attempts);
		return "endpoint_disabled";
	}

	const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
	if (!(await claimAttempt(db, delivery.id, message.attempt, timeoutMs))) return "stale";
	const secret = await openWebhookSecret(env, delivery.endpoint.id, delivery.endpoint.secret);
	const outcome = await postWebhook(
		{ url: delivery.endpoint.url, secret, rules: receiverUrlRules(env) },
		delivery.event,
		timeoutMs,
	);
	await recordAttempt(
		db,
		env,
		{
			id: delivery.id,
			endpointId: delivery.endpoint.id,
			attempt: message.attempt,
			retryable: !delivery.event.test,
		},
		outcome,
	);
	return outcome.delivered ? "delivered" : "failed";
}

function isWebhookMessage(value: unknown): value is WebhookMessage {
	const m = value as Partial<WebhookMessage> | null;
	return (
		typeof m?.deliveryId === "string" &&
		Number.isInteger(m.attempt) &&
		(m.attempt as number) >= 1 &&
		typeof m.dueAt === "number" &&
		Number.isFinite(m.dueAt)
	);
}
