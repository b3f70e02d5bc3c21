/** A queued webhook delivery attempt. Delays past the queue's maximum are made in hops until `dueAt`. */
export interface WebhookMessage {
	deliveryId: string;
	/** Epoch ms before which the attempt is not made; a message that arrives early is sent on again. */
	dueAt: number;
}
