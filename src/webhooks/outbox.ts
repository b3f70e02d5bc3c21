import type { Db } from "../db/client";
import { webhookEvents } from "../db/schema";
import type { Scope } from "../db/scope";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const WEBHOOK_EVENT_KINDS = [
	"invoice.created",
	"invoice.paid",
	"invoice.voided",
	"outcome.completed",
	"payment.successful",
	"subscription.created",
	"subscription.updated",
	"subscription.cancelled",
	"alert.triggered",
] as const;

export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/**
 * The statement that records an event in the outbox. Put it in the same `db.batch` as the change that causes
 * the event, so that both are stored or neither; delivery happens afterwards (webhooks/dispatch.ts).
 */
export function outboxInsert(
	db: Db,
	scope: Scope,
	event: WebhookEventKind,
	data: Record<string, unknown>,
	id: string = newId("evt"),
) {
	return db
		.insert(webhookEvents)
		.values({ id, environment: scope.environment, event, data, createdAt: nowIso() })
		.onConflictDoNothing();
}
