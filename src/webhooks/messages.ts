/**
 * A queued webhook delivery attempt. The message names the attempt it is for, so a stale or duplicate copy (the
 * queue delivers at least once; the sweep may re-drive a delivery) is recognised and dropped: it is acted on only
 * while the delivery is pending with `attempt - 1` attempts made.
 */
export interface WebhookMessage {
	deliveryId: string;
	/** The attempt this message makes, 1 for the first. */
	attempt: number;
	/** Epoch ms before which the attempt is not made; a message that arrives early is sent on again (a hop). */
	dueAt: number;
}

declare module "../env" {
	interface QueueMessages {
		WEBHOOK_QUEUE: WebhookMessage;
	}
}
