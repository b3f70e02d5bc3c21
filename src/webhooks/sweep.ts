import { and, asc, eq, lt, sql } from "drizzle-orm";
import { database } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { dispatchOutbox } from "./dispatch";
import type { WebhookMessage } from "./messages";
import { enqueueAttempts } from "./schedule";

// The safety net of delivery, run by the cron every 5 minutes. A pending delivery always carries the time its
// next attempt is due (or, while an attempt runs, that attempt's deadline); one overdue by more than the grace
// below lost its queue message (a failed send, a crash between D1 and the queue), and is queued again. Copies
// that turn up after all are recognised by their attempt number and dropped by the consumer.

export const SWEEP_GRACE_MS = 5 * 60_000;
const PAGE = 100;
const MAX_PAGES = 10;

export async function sweepWebhooks(env: Env): Promise<{ requeued: number }> {
	await dispatchOutbox(env);
	const db = database(env.DB);
	let requeued = 0;
	for (let page = 0; page < MAX_PAGES; page++) {
		const now = Date.now();
		const overdue = await db
			.select({ id: webhookDeliveries.id, attempts: webhookDeliveries.attempts })
			.from(webhookDeliveries)
			.where(
				and(
					eq(webhookDeliveries.status, "pending"),
					lt(webhookDeliveries.nextAttemptAt, new Date(now - SWEEP_GRACE_MS).toISOString()),
				),
			)
			.orderBy(asc(webhookDeliveries.nextAttemptAt))
			.limit(PAGE);
		if (overdue.length === 0) break;
		// Due again from now, so the next sweep leaves these alone unless they are lost once more.
		await db
			.update(webhookDeliveries)
			.set({ nextAttemptAt: new Date(now).toISOString() })
			.where(
				sql`${webhookDeliveries.id} IN (SELECT value FROM json_each(${JSON.stringify(overdue.map((d) => d.id))}))`,
			);
		const messages: WebhookMessage[] = overdue.map((d) => ({
			deliveryId: d.id,
			attempt: d.attempts + 1,
			dueAt: now,
		}));
		await enqueueAttempts(env, messages, now);
		requeued += messages.length;
		if (overdue.length < PAGE) break;
	}
	return { requeued };
}
