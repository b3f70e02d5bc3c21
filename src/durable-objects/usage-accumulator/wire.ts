/**
 * How events travel from the Worker to an accumulator (RecordCall.events): JSON text of
 * `[receivedAt, rows]`, one array per event of its columns without their names, and with no copy of what the
 * call already says. An event received at the call's `receivedAt` (every event of a request is) carries no
 * receivedAt of its own, and one without a timestamp of its own (most: it defaults to the time of receipt) has
 * null there. A batch of a thousand actions is then about half the text of the events as objects, and both ends
 * write, copy and read half as much (the transfer was about a fifth of the batch path's cost: docs/scaling.md).
 *
 * An accumulator also reads the form before, a JSON array of MeteringEvent objects, so that a Worker of the
 * version before can still call it while a deployment rolls out.
 */
import type { EventKind, MeteringEvent } from "./types";

/** An event on the wire; receivedAt only when it is not the call's. */
type WireRow = [
	id: string,
	kind: EventKind,
	agentKey: string,
	type: string,
	value: string | null,
	metadata: MeteringEvent["metadata"],
	timestamp: string | null,
	idempotencyKey: string | null,
	receivedAt?: string,
];

export function encodeEvents(events: readonly MeteringEvent[]): string {
	const receivedAt = events[0]?.receivedAt ?? "";
	const rows = events.map((e): WireRow => {
		const timestamp = e.timestamp === e.receivedAt ? null : e.timestamp;
		return e.receivedAt === receivedAt
			? [e.id, e.kind, e.agentKey, e.type, e.value, e.metadata, timestamp, e.idempotencyKey]
			: [e.id, e.kind, e.agentKey, e.type, e.value, e.metadata, timestamp, e.idempotencyKey, e.receivedAt];
	});
	return JSON.stringify([receivedAt, rows]);
}

export function decodeEvents(text: string): MeteringEvent[] {
	const parsed = JSON.parse(text) as [string, WireRow[]] | MeteringEvent[];
	if (!isWireForm(parsed)) return parsed;
	const [callReceivedAt, rows] = parsed;
	return rows.map(([id, kind, agentKey, type, value, metadata, timestamp, idempotencyKey, own]) => {
		const receivedAt = own ?? callReceivedAt;
		return {
			id,
			kind,
			agentKey,
			type,
			value,
			metadata,
			timestamp: timestamp ?? receivedAt,
			receivedAt,
			idempotencyKey,
		};
	});
}

function isWireForm(parsed: [string, WireRow[]] | MeteringEvent[]): parsed is [string, WireRow[]] {
	return typeof parsed[0] === "string";
}
