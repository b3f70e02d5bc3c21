/**
 * The R2 archive of raw events (docs/metering.md#where-events-live): gzip-compressed NDJSON, one line per event in the shape of GET /v1/events,
 * under `events/<environment>/<YYYY-MM-DD>/<accumulator>/<first event id>.ndjson.gz` — the day of the events'
 * timestamps, so that a day is one glob for DuckDB, ClickHouse or Spark.
 *
 * The accumulator archives its oldest unarchived groups, a bounded batch at a time: one object per day of the
 * batch, written, then the groups marked archived. A retry after a failure takes the same groups first, so it
 * writes the same keys again (an object is only ever replaced by itself, or by itself plus later events of the
 * same day and batch): nothing is archived twice under two keys, nothing is left out. Archiving runs from the
 * alarm, apart from counting, so a failing R2 never blocks ingest; the alarm retries it.
 */
import { Decimal } from "../../../lib/decimal";
import { repeatedJson } from "../../../lib/json";
import type { EventRow } from "../storage/event-rows";
import { hasUnarchived, markArchived, type RecentGroups, readUnarchived } from "../storage/raw-events";
import type { FlushTarget } from "../types";
import type { ArchiveHooks } from "./faults";

/** Events per archive batch: objects of a few hundred kilobytes compressed. */
export const ARCHIVE_BATCH_EVENTS = 5_000;

/**
 * Custom metadata of each object: the oldest and newest timestamp of its events, so that a reader that lists a
 * day (src/events/archive-pages.ts) opens only the objects that can hold what it looks for.
 */
export const ARCHIVE_MIN_TS = "min_ts";
export const ARCHIVE_MAX_TS = "max_ts";

/** An event as GET /v1/events and the archive show it. */
export interface EventView {
	id: string;
	kind: "action" | "outcome";
	agent_key: string;
	type: string;
	value: number | null;
	metadata: Record<string, string | number | boolean | null>;
	timestamp: string;
	received_at: string;
	subscription_id: string | null;
	billable: boolean;
}

/**
 * Whether an event counted by this accumulator is billable (docs/billing.md#subscription-lifecycle): it reached a subscription, at a timestamp when
 * that subscription was active (`billableFrom`: its start; null when unknown, as for events stored before starts
 * were recorded).
 */
export function isBillable(
	subscriptionId: string | null,
	timestamp: string,
	billableFrom: string | null,
): boolean {
	return subscriptionId !== null && (billableFrom === null || timestamp >= billableFrom);
}

export function eventViewOf(
	row: EventRow,
	subscriptionId: string | null,
	billableFrom: string | null,
): EventView {
	const [id, kind, agentKey, type, value, metadata, timestamp, receivedAt] = row;
	return {
		id,
		kind: kind as EventView["kind"],
		agent_key: agentKey,
		type,
		value: kind === "outcome" ? Decimal.from(value ?? "0").toNumber() : null,
		metadata: metadata ?? {},
		timestamp,
		received_at: receivedAt,
		subscription_id: subscriptionId,
		billable: isBillable(subscriptionId, timestamp, billableFrom),
	};
}

/**
 * JSON.stringify(eventViewOf(row, subscriptionId, billableFrom)), written directly: the archive writes a line per
 * event, and building each view to serialize it cost over twice as much (node micro-bench, 5,000 events: 1.4-1.6
 * µs an event against 0.6). Ids and timestamps are made by the service ([a-z0-9_], ISO dates) and kinds are fixed
 * words, so they are written as they are; every other value goes through JSON.stringify, an agent key or a type
 * once for a run of equal ones. test/events/archive-line.test.ts holds it to the view.
 */
export function archiveLineWriter(
	subscriptionId: string | null,
	billableFrom: string | null,
): (row: EventRow) => string {
	const subscription = JSON.stringify(subscriptionId);
	const agentKeyJson = repeatedJson();
	const typeJson = repeatedJson();
	return (row) => {
		const [id, kind, agentKey, type, value, metadata, timestamp, receivedAt] = row;
		const number = kind === "outcome" ? JSON.stringify(Decimal.from(value ?? "0").toNumber()) : "null";
		const billable = isBillable(subscriptionId, timestamp, billableFrom);
		return `{"id":"${id}","kind":"${kind}","agent_key":${agentKeyJson(agentKey)},"type":${typeJson(type)},"value":${number},"metadata":${JSON.stringify(metadata ?? {})},"timestamp":"${timestamp}","received_at":"${receivedAt}","subscription_id":${subscription},"billable":${billable}}`;
	};
}

export function archiveKey(
	environment: string,
	day: string,
	accumulator: string,
	firstEventId: string,
): string {
	return `events/${environment}/${day}/${accumulator}/${firstEventId}.ndjson.gz`;
}

/**
 * Level 3, not CompressionStream's fixed 6: on varied events (models, token counts, costs, users) it takes under
 * half the CPU for objects about 13% larger (44 against 39 bytes an event; node micro-bench of 5,000 lines). The
 * archive is written by the accumulator, on the thread that counts events. node:zlib is imported by the first
 * write: loading it loads the runtime's Node compatibility streams, which nothing else here needs at startup.
 */
let zlib: typeof import("node:zlib") | undefined;
export async function gzip(text: string): Promise<Uint8Array> {
	// Each caller awaits its own import (the module loads once): an accumulator awaiting a promise that another
	// began is I/O across Durable Objects, which the runtime refuses.
	zlib ??= await import("node:zlib");
	return zlib.gzipSync(text, { level: 3 });
}

export interface ArchiveReport {
	events: number;
	objects: number;
	bytes: number;
	/** false when events are left for another call. */
	complete: boolean;
}

/** Archives batches until nothing is left or `maxBatches` were written. Throws when a write fails. */
export async function archiveEvents(
	bucket: R2Bucket,
	sql: SqlStorage,
	target: FlushTarget,
	billableFrom: string | null,
	hooks: ArchiveHooks,
	recent?: RecentGroups,
	maxBatches = 20,
): Promise<ArchiveReport> {
	const report: ArchiveReport = { events: 0, objects: 0, bytes: 0, complete: true };
	const lineOf = archiveLineWriter(target.kind === "sub" ? target.id : null, billableFrom);
	for (let batch = 0; ; batch++) {
		if (batch === maxBatches) {
			report.complete = !hasUnarchived(sql);
			break;
		}
		const { lastSeq, rows } = readUnarchived(sql, ARCHIVE_BATCH_EVENTS, recent);
		if (lastSeq === null) break;
		// A day's NDJSON text, appended to line by line (a rope: cheaper than joining an array of lines).
		const days = new Map<string, { first: string; text: string; min: string; max: string }>();
		for (const row of rows) {
			const timestamp = row[6];
			const day = timestamp.slice(0, 10);
			const line = `${lineOf(row)}\n`;
			const entry = days.get(day);
			if (entry) {
				entry.text += line;
				if (timestamp < entry.min) entry.min = timestamp;
				if (timestamp > entry.max) entry.max = timestamp;
			} else days.set(day, { first: row[0], text: line, min: timestamp, max: timestamp });
		}
		for (const [day, { first, text, min, max }] of days) {
			const key = archiveKey(target.environment, day, target.name, first);
			hooks.beforePut?.(key);
			const body = await gzip(text);
			await bucket.put(key, body, {
				httpMetadata: { contentType: "application/gzip" },
				customMetadata: { [ARCHIVE_MIN_TS]: min, [ARCHIVE_MAX_TS]: max },
			});
			report.objects++;
			report.bytes += body.byteLength;
		}
		markArchived(sql, lastSeq, recent);
		report.events += rows.length;
	}
	return report;
}
