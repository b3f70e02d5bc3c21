import { and, eq } from "drizzle-orm";
import { actingAs, SYSTEM_CONTEXT } from "../audit/context";
import { writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { webhookDeliveries, webhookEndpoints, webhookEvents } from "../db/schema";
import type { Env, Environment } from "../env";
import { enqueueAttempt, MAX_ATTEMPTS, retryDelayAfter } from "./schedule";
import type { AttemptOutcome, StoredEvent } from "./send";

// One delivery attempt's bookkeeping in D1. An attempt is first claimed (attempts n-1 → n, a conditional update),
// so two copies of the same message never both send; its outcome is then written under the same condition.

export interface DeliveryToAttempt {
	id: string;
	status: "pending" | "succeeded" | "failed";
	attempts: number;
	endpoint: { id: string; url: string; secret: string; status: "enabled" | "disabled" };
	event: StoredEvent;
}

export async function loadDeliveryToAttempt(
	db: Db,
	deliveryId: string,
): Promise<DeliveryToAttempt | undefined> {
	const [row] = await db
		.select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: webhookEvents })
		.from(webhookDeliveries)
		.innerJoin(
			webhookEndpoints,
			and(
				eq(webhookEndpoints.id, webhookDeliveries.endpointId),
				eq(webhookEndpoints.environment, webhookDeliveries.environment),
			),
		)
		.innerJoin(
			webhookEvents,
			and(
				eq(webhookEvents.id, webhookDeliveries.eventId),
				eq(webhookEvents.environment, webhookDeliveries.environment),
			),
		)
		.where(eq(webhookDeliveries.id, deliveryId));
	if (!row) return undefined;
	const { delivery, endpoint, event } = row;
	return {
		id: delivery.id,
		status: delivery.status,
		attempts: delivery.attempts,
		endpoint: { id: endpoint.id, url: endpoint.url, secret: endpoint.secret, status: endpoint.status },
		event: {
			id: event.id,
			event: event.event,
			createdAt: event.createdAt,
			data: event.data,
			test: event.test,
		},
	};
}

const madeAttempts = (deliveryId: string, attempts: number) =>
	and(
		eq(webhookDeliveries.id, deliveryId),
		eq(webhookDeliveries.attempts, attempts),
		eq(webhookDeliveries.status, "pending"),
	);

/**
 * Takes attempt number `attempt` for this process; false when another copy took it or the delivery moved on.
 * Until the outcome is written, next_attempt_at is the attempt's deadline, after which the sweep may re-drive it.
 */
export async function claimAttempt(
	db: Db,
	deliveryId: string,
	attempt: number,
	timeoutMs: number,
): Promise<boolean> {
	const claimed = await db
		.update(webhookDeliveries)
		.set({ attempts: attempt, nextAttemptAt: new Date(Date.now() + timeoutMs).toISOString() })
		.where(madeAttempts(deliveryId, attempt - 1))
		.returning({ id: webhookDeliveries.id });
	return claimed.length > 0;
}

/**
 * Writes the outcome of attempt `attempt` and, when a retry is due, queues it. Test sends are never retried.
 * A 410 disables the endpoint and ends the delivery.
 */
export async function recordAttempt(
	db: Db,
	env: Env,
	delivery: { id: string; endpointId: string; attempt: number; retryable: boolean },
	outcome: AttemptOutcome,
): Promise<void> {
	const now = Date.now();
	const delay =
		!outcome.delivered && !outcome.gone && delivery.retryable && delivery.attempt < MAX_ATTEMPTS
			? retryDelayAfter(delivery.attempt)
			: null;
	const base = { lastStatusCode: outcome.statusCode, lastError: outcome.error };
	const changes = outcome.delivered
		? { ...base, status: "succeeded" as const, nextAttemptAt: null, deliveredAt: new Date(now).toISOString() }
		: delay === null
			? { ...base, status: "failed" as const, nextAttemptAt: null }
			: { ...base, status: "pending" as const, nextAttemptAt: new Date(now + delay).toISOString() };
	const update = db.update(webhookDeliveries).set(changes).where(madeAttempts(delivery.id, delivery.attempt));
	if (outcome.gone) {
		const [endpoint] = await db
			.select({ environment: webhookEndpoints.environment, status: webhookEndpoints.status })
			.from(webhookEndpoints)
			.where(eq(webhookEndpoints.id, delivery.endpointId));
		const disable = db
			.update(webhookEndpoints)
			.set({ status: "disabled", updatedAt: new Date(now).toISOString() })
			.where(eq(webhookEndpoints.id, delivery.endpointId));
		if (endpoint?.status !== "enabled") await db.batch([update, disable]);
		else {
			// The receiver turned the endpoint off, not whoever sent the request: the system is the actor.
			await actingAs(SYSTEM_CONTEXT, () =>
				writeAudited(db, { environment: endpoint.environment as Environment }, [update, disable], {
					action: "webhook_endpoint.disabled",
					resourceId: delivery.endpointId,
					changes: { status: ["enabled", "disabled"] },
				}),
			);
		}
	} else {
		await update;
	}
	// Should this send fail, the delivery stays pending with a due time, and the sweep re-drives it.
	if (delay !== null)
		await enqueueAttempt(
			env,
			{ deliveryId: delivery.id, attempt: delivery.attempt + 1, dueAt: now + delay },
			now,
		);
}

/** A pending delivery whose endpoint was disabled meanwhile ends here: disabled endpoints get nothing. */
export async function failForDisabledEndpoint(db: Db, deliveryId: string, attempts: number): Promise<void> {
	await db
		.update(webhookDeliveries)
		.set({
			status: "failed",
			nextAttemptAt: null,
			lastError: "The endpoint was disabled before this attempt.",
		})
		.where(madeAttempts(deliveryId, attempts));
}
