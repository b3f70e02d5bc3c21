/**
 * PROVISIONAL (wave/pricing): the `events` engineer owns raw-event retention and provides the real version of
 * this file with the same path and signature; the integrator keeps theirs. This one reads only what today's
 * accumulator still holds — the events waiting for the flush (pending_events) — so a rebuild here sees the
 * unflushed events alone.
 */
import type { EventRow } from "./flush";
import type { MeteringEvent } from "./types";

/** The events retained here whose timestamp lies in [fromTimestamp, toTimestamp), oldest stored first. */
export function readRawEvents(sql: SqlStorage, fromTimestamp: string, toTimestamp: string): MeteringEvent[] {
	const hasTable = sql
		.exec<{ n: number }>(
			"SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pending_events'",
		)
		.one().n;
	if (hasTable === 0) return [];
	const events: MeteringEvent[] = [];
	for (const { json } of sql.exec<{ json: string }>("SELECT json FROM pending_events ORDER BY seq")) {
		for (const row of JSON.parse(json) as EventRow[]) {
			const [id, kind, agentKey, type, value, metadata, timestamp, receivedAt, idempotencyKey] = row;
			if (timestamp < fromTimestamp || timestamp >= toTimestamp) continue;
			events.push({
				id,
				kind: kind as MeteringEvent["kind"],
				agentKey,
				type,
				value,
				// Rows of earlier versions kept metadata as JSON text.
				metadata: typeof metadata === "string" ? JSON.parse(metadata) : metadata,
				timestamp,
				receivedAt,
				idempotencyKey,
			});
		}
	}
	return events;
}
