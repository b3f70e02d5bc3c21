import { chunkJsonRows, statement } from "../db/batch";
import type { Db } from "../db/client";
import { webhookEvents } from "../db/schema";
import type { Scope } from "../db/scope";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { noteOutboxWrite } from "./outbox-writes";

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
	"credit_note.created",
	"payment.failed",
	"invoice.payment_failed",
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
	noteOutboxWrite();
	return db
		.insert(webhookEvents)
		.values({ id, environment: scope.environment, event, data, createdAt: nowIso() })
		.onConflictDoNothing();
}

/** An outbox row whose id is fixed and whose data is already JSON text. */
export interface OutboxRow {
	id: string;
	event: string;
	data: string;
}

/**
 * The bulk form of outboxInsert: many outbox rows in one statement per ~90 KB, to put in
 * the same D1 batch as the change that emits them. A row already stored (same id) is left alone.
 */
export function outboxInsertMany(
	d1: D1Database,
	environment: string,
	rows: readonly OutboxRow[],
	createdAt: string,
): D1PreparedStatement[] {
	noteOutboxWrite();
	return chunkJsonRows(rows.map((row) => JSON.stringify(row))).map((group) =>
		statement(
			d1,
			`INSERT INTO webhook_events (id, environment, event, data, created_at)
			SELECT o.value ->> '$.id', ?1, o.value ->> '$.event', o.value ->> '$.data', ?2
			FROM json_each(?3) AS o WHERE true
			ON CONFLICT DO NOTHING`,
			environment,
			createdAt,
			`[${group.join(",")}]`,
		),
	);
}
