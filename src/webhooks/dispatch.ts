import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { type Db, database } from "../db/client";
import { webhookDeliveries, webhookEndpoints, webhookEvents } from "../db/schema";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { WebhookMessage } from "./messages";
import { enqueueAttempts } from "./schedule";

// Fan-out of the outbox. One D1 batch creates the deliveries of a page of events and marks those events
// dispatched; the unique (endpoint_id, event_id) index and RETURNING make every delivery queued by exactly the
// run that created it, however many runs overlap. A failed queue send loses nothing: the delivery is pending
// with a due time, and the sweep (sweep.ts) re-drives it.

const EVENTS_PER_PAGE = 50;
// Bounds one invocation's work (D1 allows 1,000 queries); what is left waits for the next call or sweep.
const MAX_PAGES = 20;

/**
 * Fans undispatched outbox events out to one delivery per subscribed, enabled endpoint of the event's
 * environment and queues them. Safe to call any number of times, concurrently: the cron sweep calls it too.
 * Never throws (it runs after the change that emitted the events has been stored); failures are logged.
 */
export async function dispatchOutbox(env: Env): Promise<void> {
	try {
		const db = database(env.DB);
		for (let page = 0; page < MAX_PAGES; page++) {
			const { events, queued } = await dispatchPage(db);
			try {
				await enqueueAttempts(env, queued);
			} catch (error) {
				console.error(
					JSON.stringify({ at: "webhook-dispatch", error: `queue send failed: ${String(error)}` }),
				);
			}
			if (events < EVENTS_PER_PAGE) return;
		}
	} catch (error) {
		console.error(JSON.stringify({ at: "webhook-dispatch", error: String(error) }));
	}
}

async function dispatchPage(db: Db): Promise<{ events: number; queued: WebhookMessage[] }> {
	const events = await db
		.select({ id: webhookEvents.id, environment: webhookEvents.environment, event: webhookEvents.event })
		.from(webhookEvents)
		.where(isNull(webhookEvents.dispatchedAt))
		.orderBy(asc(webhookEvents.createdAt), asc(webhookEvents.id))
		.limit(EVENTS_PER_PAGE);
	if (events.length === 0) return { events: 0, queued: [] };

	const environments = [...new Set(events.map((e) => e.environment))];
	const endpoints = await db
		.select({
			id: webhookEndpoints.id,
			environment: webhookEndpoints.environment,
			events: webhookEndpoints.events,
		})
		.from(webhookEndpoints)
		.where(and(inArray(webhookEndpoints.environment, environments), eq(webhookEndpoints.status, "enabled")));

	const now = nowIso();
	const deliveries = events.flatMap((event) =>
		endpoints
			.filter(
				(endpoint) => endpoint.environment === event.environment && endpoint.events.includes(event.event),
			)
			.map((endpoint) => ({
				id: newId("dlv"),
				environment: event.environment,
				endpoint_id: endpoint.id,
				event_id: event.id,
				event: event.event,
			})),
	);
	// One JSON parameter instead of a VALUES list keeps the statement under D1's 100 bound parameters. The
	// SELECT lists every column of webhook_deliveries in table order; "WHERE true" lets SQLite parse the upsert.
	const [created] = await db.batch([
		db
			.insert(webhookDeliveries)
			.select(sql`
				SELECT json_extract(value, '$.id'), json_extract(value, '$.environment'), json_extract(value, '$.endpoint_id'),
					json_extract(value, '$.event_id'), json_extract(value, '$.event'), 'pending', 0, NULL, NULL, ${now}, ${now}, NULL
				FROM json_each(${JSON.stringify(deliveries)}) WHERE true`)
			.onConflictDoNothing()
			.returning({ id: webhookDeliveries.id }),
		db
			.update(webhookEvents)
			.set({ dispatchedAt: now })
			.where(
				and(
					isNull(webhookEvents.dispatchedAt),
					sql`${webhookEvents.id} IN (SELECT value FROM json_each(${JSON.stringify(events.map((e) => e.id))}))`,
				),
			),
	]);
	const dueAt = Date.parse(now);
	return { events: events.length, queued: created.map(({ id }) => ({ deliveryId: id, attempt: 1, dueAt })) };
}
