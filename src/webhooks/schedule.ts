import type { Env } from "../env";
import type { WebhookMessage } from "./messages";

// Retry schedule: after the attempt n fails, attempt n + 1 is due RETRY_DELAYS_MS[n - 1] later. Six retries,
// seven attempts at most. A queue message can be delayed by 12 hours at most, so the 24-hour wait is made in hops:
// the message is sent on with the remaining delay until its due time has come (see consumer.ts).
export const RETRY_DELAYS_MS = [
	60_000, // 1 min
	5 * 60_000, // 5 min
	15 * 60_000, // 15 min
	60 * 60_000, // 1 h
	6 * 60 * 60_000, // 6 h
	24 * 60 * 60_000, // 24 h
] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const MAX_QUEUE_DELAY_SECONDS = 12 * 60 * 60;

/** How long after the failed attempt `attempt` the next one is due, or null when none is left. */
export function retryDelayAfter(attempt: number): number | null {
	return RETRY_DELAYS_MS[attempt - 1] ?? null;
}

/** The queue delay that brings a message to its due time, or as close as one hop can. */
export function queueDelaySeconds(dueAt: number, now: number = Date.now()): number {
	return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}

export async function enqueueAttempt(
	env: Env,
	message: WebhookMessage,
	now: number = Date.now(),
): Promise<void> {
	await env.WEBHOOK_QUEUE.send(message, { delaySeconds: queueDelaySeconds(message.dueAt, now) });
}

/** Queues many attempts; the queue takes at most 100 messages per call. */
export async function enqueueAttempts(
	env: Env,
	messages: WebhookMessage[],
	now: number = Date.now(),
): Promise<void> {
	for (let i = 0; i < messages.length; i += 100) {
		await env.WEBHOOK_QUEUE.sendBatch(
			messages.slice(i, i + 100).map((body) => ({ body, delaySeconds: queueDelaySeconds(body.dueAt, now) })),
		);
	}
}
