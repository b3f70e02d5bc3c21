/**
 * An event as the accumulator stores it: a JSON array of its columns (eventRow), without their names, in small
 * groups (eventGroups) that stay within one page of SQLite. Dedupe keys, raw events, the set-aside pages of an
 * adoption and the archive all keep this form.
 */
import type { MeteringEvent } from "../types";

export interface ChunkLimits {
	/** Events per stored group at most. */
	events: number;
	/** Bytes of a stored group at most (it also stays within STORED_GROUP_BYTES). */
	eventBytes: number;
	/** Rows of each kind (daily, costs, outbox) per chunk. */
	rows: number;
}

export const DEFAULT_CHUNK_LIMITS: ChunkLimits = { events: 1000, eventBytes: 96 * 1024, rows: 100 };

export interface EventGroup {
	size: number;
	/** A JSON array of event rows. */
	json: string;
}

/**
 * An event as the accumulator keeps it: its columns by position. subscription_id is not among them: it is the
 * accumulator's own. metadata is kept as JSON.
 */
export type EventRow = [
	id: string,
	kind: MeteringEvent["kind"],
	agentKey: string,
	type: string,
	value: string | null,
	metadata: MeteringEvent["metadata"],
	timestamp: string,
	receivedAt: string,
	idempotencyKey: string | null,
];

export function eventRow(event: MeteringEvent): EventRow {
	return [
		event.id,
		event.kind,
		event.agentKey,
		event.type,
		event.value,
		event.metadata,
		event.timestamp,
		event.receivedAt,
		event.idempotencyKey,
	];
}

// A stored group stays within one page of the accumulator's SQLite: rows that spill onto overflow pages are
// many times slower to write, read and delete there than the same bytes in small rows.
const STORED_GROUP_BYTES = 3_500;

/**
 * Groups event rows as they are stored: small, and at most `limits.events` each, so that a chunk can take whole
 * groups. Each group is one JSON.stringify, not one per row: how many rows fit is learnt from the group before,
 * and a group over its bytes (rows vary in size) is made again, smaller in proportion.
 */
export function eventGroups(rows: readonly EventRow[], limits: ChunkLimits): EventGroup[] {
	const maxBytes = Math.min(STORED_GROUP_BYTES, limits.eventBytes);
	const groups: EventGroup[] = [];
	if (rows.length === 0) return groups;
	let fits = Math.floor(maxBytes / (JSON.stringify(rows[0]).length + 1));
	for (let start = 0; start < rows.length; ) {
		let size = Math.max(1, Math.min(fits, limits.events, rows.length - start));
		let json = JSON.stringify(rows.slice(start, start + size));
		while (json.length > maxBytes && size > 1) {
			size = Math.max(1, Math.min(size - 1, Math.floor((size * maxBytes) / json.length)));
			json = JSON.stringify(rows.slice(start, start + size));
		}
		groups.push({ size, json });
		start += size;
		fits = Math.floor((size * maxBytes) / json.length);
	}
	return groups;
}
