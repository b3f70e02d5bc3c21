/**
 * Dedupe keys (docs/metering.md#deduplication): scoped to (environment, event kind, agent_key) for at least 35 days, whichever accumulators
 * the instance passes through. An accumulator is one environment; here a key is stored per agent key, as
 * `<kind>:<idempotency key>`, with the original event (as a compact array, see storedEventRow) and its expiry.
 *
 * Keys travel with their instance (handover.ts): the accumulator that takes an instance over copies the keys of
 * every earlier holder before it counts any event of it. So each table here holds its own keys and the ones it
 * was handed.
 */

import type { MeteringEvent, StoredEvent } from "../types";
import { type EventRow, eventRow } from "./event-rows";

export const DEDUPE_TTL_MS = 36 * 24 * 60 * 60 * 1000;

/** A dedupe key as it travels between accumulators: [agent key, key, event (storedEventRow JSON), expires at]. */
export type DedupeRow = [agentKey: string, key: string, event: string, expiresAt: number];

/** The key of an event within its agent key, or null when it has no idempotency key. */
export function dedupeKeyOf(event: MeteringEvent): string | null {
	return event.idempotencyKey === null ? null : `${event.kind}:${event.idempotencyKey}`;
}

/** One string for a map of (agent key, key); agent keys never contain NUL. */
export const dedupeMapKey = (agentKey: string, key: string) => `${agentKey}\u0000${key}`;

/** The columns of a flushed event (flush.ts's EventRow) and the subscription it was counted for. */
type EventColumns = [...EventRow, subscriptionId: string | null];

/** The original event without its property names: about half the bytes of the object. */
export function storedEventRow(event: StoredEvent): string {
	const row: EventColumns = [...eventRow(event), event.subscriptionId];
	return JSON.stringify(row);
}

export function storedEventFromRow(json: string): StoredEvent {
	const [id, kind, agentKey, type, value, metadata, timestamp, receivedAt, idempotencyKey, subscriptionId] =
		JSON.parse(json) as EventColumns;
	return { id, kind, agentKey, type, value, metadata, timestamp, receivedAt, idempotencyKey, subscriptionId };
}

/** The stored originals of these (agent key, key) pairs that have not expired, by dedupeMapKey. */
export function readOriginals(
	sql: SqlStorage,
	pairs: readonly [agentKey: string, key: string][],
	now: number,
): Map<string, StoredEvent> {
	if (pairs.length === 0) return new Map();
	return new Map(
		sql
			.exec<{ agent_key: string; key: string; event: string }>(
				`SELECT d.agent_key, d.key, d.event FROM json_each(?) AS k
				JOIN dedupe_keys AS d ON d.agent_key = k.value ->> 0 AND d.key = k.value ->> 1
				WHERE d.expires_at > ?`,
				JSON.stringify(pairs),
				now,
			)
			.toArray()
			.map((row) => [dedupeMapKey(row.agent_key, row.key), storedEventFromRow(row.event)]),
	);
}

/** Stores keys; REPLACE: an expired key not purged yet is taken over by its new event. */
export function insertDedupeRows(sql: SqlStorage, rows: readonly DedupeRow[], replace: boolean): void {
	if (rows.length === 0) return;
	sql.exec(
		`INSERT OR ${replace ? "REPLACE" : "IGNORE"} INTO dedupe_keys (agent_key, key, event, expires_at)
		SELECT d.value ->> 0, d.value ->> 1, d.value ->> 2, d.value ->> 3 FROM json_each(?) AS d`,
		JSON.stringify(rows),
	);
}

/** A page of an agent key's live keys, in key order after `after`, for a handover. */
export function dedupePage(
	sql: SqlStorage,
	agentKey: string,
	after: string | null,
	limit: number,
	now: number,
): DedupeRow[] {
	return sql
		.exec<{ key: string; event: string; expires_at: number }>(
			`SELECT key, event, expires_at FROM dedupe_keys
			WHERE agent_key = ? AND key > ? AND expires_at > ? ORDER BY key LIMIT ?`,
			agentKey,
			after ?? "",
			now,
			limit,
		)
		.toArray()
		.map((row) => [agentKey, row.key, row.event, row.expires_at]);
}

export function purgeExpiredDedupeRows(sql: SqlStorage, now: number): void {
	sql.exec("DELETE FROM dedupe_keys WHERE expires_at <= ?", now);
}

/**
 * Storage written before keys were scoped to agent keys: `dedupe (key, event JSON object, expires_at)` becomes
 * dedupe_keys, and holdings gain `imported` (-1: the keys of earlier holders were never fetched, so the next
 * event of a held instance fetches them). Runs on start, where the tables exist.
 */
export function upgradeDedupeStorage(sql: SqlStorage, tables: ReadonlySet<string>): void {
	if (tables.has("dedupe")) {
		sql.exec(
			`INSERT OR IGNORE INTO dedupe_keys (agent_key, key, event, expires_at)
			SELECT event ->> '$.agentKey', key,
				json_array(event ->> '$.id', event ->> '$.kind', event ->> '$.agentKey', event ->> '$.type',
					event -> '$.value', event -> '$.metadata', event ->> '$.timestamp', event ->> '$.receivedAt',
					event -> '$.idempotencyKey', event -> '$.subscriptionId'),
				expires_at
			FROM dedupe`,
		);
		sql.exec("DROP TABLE dedupe");
	}
	const columns = sql
		.exec<{ name: string }>("SELECT name FROM pragma_table_info('holdings')")
		.toArray()
		.map((row) => row.name);
	if (!columns.includes("imported")) {
		sql.exec("ALTER TABLE holdings ADD COLUMN imported INTEGER NOT NULL DEFAULT -1");
	}
}
