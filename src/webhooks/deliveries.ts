import type { z } from "@hono/zod-openapi";
import { desc, eq, sql } from "drizzle-orm";
import { updateAudited } from "../audit/write";
import { getInScope, type InScope, type Page, type WithEnv } from "../db/rows";
import { webhookDeliveries, webhookEndpoints, webhookEvents } from "../db/schema";
import { inScope } from "../db/scope";
import { conflict, notFound } from "../lib/errors";
import { nowIso } from "../lib/time";
import { enqueueAttempt } from "./schedule";
import type { WebhookDelivery } from "./schemas";
import { envelopeBody } from "./send";

export type WebhookDeliveryView = z.infer<typeof WebhookDelivery>;

export function toDeliveryView(row: typeof webhookDeliveries.$inferSelect): WebhookDeliveryView {
	return {
		id: row.id,
		event_id: row.eventId,
		event: row.event,
		status: row.status,
		attempts: row.attempts,
		last_status_code: row.lastStatusCode,
		last_error: row.lastError,
		// While pending it is when the next attempt is due; a finished delivery has none.
		next_attempt_at: row.status === "pending" ? row.nextAttemptAt : null,
		created_at: row.createdAt,
		delivered_at: row.deliveredAt,
	};
}

export async function listDeliveries({
	db,
	scope,
	endpointId,
	limit,
	offset,
	status,
}: InScope &
	Page & {
		endpointId: string;
		status?: WebhookDeliveryView["status"];
	}) {
	const where = inScope(
		scope,
		webhookDeliveries,
		eq(webhookDeliveries.endpointId, endpointId),
		status ? eq(webhookDeliveries.status, status) : undefined,
	);
	const [endpoint, rows, [count]] = await db.batch([
		db
			.select({ id: webhookEndpoints.id })
			.from(webhookEndpoints)
			.where(inScope(scope, webhookEndpoints, eq(webhookEndpoints.id, endpointId))),
		db
			.select()
			.from(webhookDeliveries)
			.where(where)
			.orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
			.limit(limit)
			.offset(offset),
		db.select({ n: sql<number>`count(*)` }).from(webhookDeliveries).where(where),
	]);
	if (endpoint.length === 0) throw notFound("webhook endpoint", endpointId);
	return { items: rows.map(toDeliveryView), total: count?.n ?? 0 };
}

/** One delivery with the body its attempts send (built from the stored event, as every attempt builds it). */
export async function getDelivery({
	db,
	scope,
	endpointId,
	deliveryId,
}: InScope & {
	endpointId: string;
	deliveryId: string;
}): Promise<WebhookDeliveryView & { payload: Record<string, unknown> }> {
	const [row] = await db
		.select({ delivery: webhookDeliveries, event: webhookEvents })
		.from(webhookDeliveries)
		.innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
		.where(
			inScope(
				scope,
				webhookDeliveries,
				eq(webhookDeliveries.id, deliveryId),
				eq(webhookDeliveries.endpointId, endpointId),
			),
		);
	if (!row) throw notFound("delivery", deliveryId);
	const payload = JSON.parse(envelopeBody(row.event)) as Record<string, unknown>;
	return { ...toDeliveryView(row.delivery), payload };
}

/**
 * Queues the next attempt of a delivery now, whatever its state: a failed one becomes pending again, a delivered
 * one is sent once more. If that attempt fails, the delivery continues with the automatic retries its attempt
 * count has left, or fails again when none is left.
 */
export async function retryDelivery({
	db,
	env,
	scope,
	endpointId,
	deliveryId,
}: WithEnv & {
	endpointId: string;
	deliveryId: string;
}): Promise<WebhookDeliveryView> {
	const endpoint = await getInScope(db, scope, webhookEndpoints, "webhook endpoint", endpointId);
	if (endpoint.status !== "enabled") {
		throw conflict("This webhook endpoint is disabled; enable it (PATCH status 'enabled') before retrying.");
	}
	const now = nowIso();
	const row = await updateAudited(
		db,
		scope,
		webhookDeliveries,
		"delivery",
		deliveryId,
		{ status: "pending", nextAttemptAt: now },
		"webhook_delivery.retried",
		eq(webhookDeliveries.endpointId, endpointId),
	);
	await enqueueAttempt(env, { deliveryId: row.id, attempt: row.attempts + 1, dueAt: Date.parse(now) });
	return toDeliveryView(row);
}
