/**
 * Raw events in the accumulator (docs/metering.md#where-events-live): D1 keeps aggregates only, so the accumulator that counted an event keeps
 * it — for the explorer, for rebuilding aggregates, and until it is in the R2 archive (archive.ts).
 *
 * Events are stored as they arrive, in small groups of event rows (flush.ts: eventRow, eventGroups): one row of
 * SQLite per ~15 events, each event a JSON array of its columns without names. A group carries the smallest and
 * largest timestamp of its events, so a read of a time range (newest first, for the explorer) opens only the
 * groups that overlap it, and `archived` once its events are in R2.
 *
 * Retention: a group is deleted once archived and its newest event is older than RAW_EVENTS_RETENTION_MS — and,
 * whatever its age, oldest first, while the object's storage is over RAW_EVENTS_MAX_BYTES (the explorer then
 * reads those days from the archive). An unarchived group is never deleted: a failed archive keeps its events
 * until a retry succeeds. The newest timestamp ever purged is recorded (`raw_events_purged`): every event counted
 * here with a later timestamp is still here, so the explorer reads the archive only below it (eventsRetainedAfter).
 */

import type { MeteringEvent } from "../types";
import { type ChunkLimits, type EventRow, eventGroups } from "./event-rows";

/** Raw events are kept at least this long after their timestamp (the contract asks 35 days). */
export const RAW_EVENTS_RETENTION_MS = 36 * 24 * 60 * 60 * 1000;

/**
 * Storage above which archived events go early, oldest first: well under a Durable Object's 10 GB, leaving room
 * for dedupe keys (which must stay 35 days), aggregates and events not yet archived. At ~250 bytes per event
 * (measured: test/metering/raw-events.test.ts) this keeps about 24 million events.
 */
export const RAW_EVENTS_MAX_BYTES = 6 * 1024 * 1024 * 1024;

const TIMESTAMP = 6;

// Groups written by one INSERT: 4 bound values each, within a Durable Object's 100 per statement. A statement
// has a fixed cost of its own (and locally one trace span), so a call of a thousand events makes 3 instead of
// ~70. The texts are built once, so the runtime's statement cache sees the same few.
const GROUPS_PER_INSERT = 25;
const insertGroups = (groups: number, archived: 0 | 1, returning: boolean) =>
	`INSERT INTO raw_events (size, json, min_ts, max_ts, archived) VALUES ${Array.from(
		{ length: groups },
		() => `(?, ?, ?, ?, ${archived})`,
	).join(", ")}${returning ? " RETURNING seq" : ""}`;
// Archived, unarchived, and unarchived answering their seqs (for RecentGroups); then by number of groups (index
// 0 unused).
const INSERT_GROUPS = (
	[
		[1, false],
		[0, false],
		[0, true],
	] as const
).map(([archived, returning]) =>
	Array.from({ length: GROUPS_PER_INSERT + 1 }, (_, n) => insertGroups(n, archived, returning)),
);

/**
 * Events RecentGroups holds at most: two archive batches (archive.ts), about 3 MB of rows (~300 B an event). An
 * accumulator taking 1,000-event batches as fast as the local bench sends them holds ~7,500 unarchived events when
 * its alarm fires; past the bound, the rest is read back from SQLite.
 */
export const RECENT_GROUPS_MAX_EVENTS = 10_000;

/**
 * The groups this object stored and has not archived yet, as the rows it stored, so that archiving them needs
 * neither reading them back nor parsing them (a quarter of what archiving cost in the batch profile). Only a
 * cache: a group is taken from it under its seq and with its size, and what it lacks — after a restart, past its
 * bound, a group that adoption changed — is read from SQLite as before. A committed seq is never given again
 * (AUTOINCREMENT), but a rolled-back call's seqs are: the failed transaction clears this (store.ts), and a seq
 * noted again replaces what it held. Adoption, which rewrites groups, clears it too.
 */
export class RecentGroups {
	private readonly groups = new Map<number, EventRow[]>();
	private events = 0;

	add(seq: number, rows: EventRow[]): void {
		// What a rolled-back call noted under this seq is not this group (clear() forgets it too).
		this.forget(seq);
		if (this.events + rows.length > RECENT_GROUPS_MAX_EVENTS) return;
		this.groups.set(seq, rows);
		this.events += rows.length;
	}

	get(seq: number, size: number): EventRow[] | undefined {
		const rows = this.groups.get(seq);
		return rows !== undefined && rows.length === size ? rows : undefined;
	}

	get isEmpty(): boolean {
		return this.groups.size === 0;
	}

	/** After the groups up to `seq` were archived. */
	forgetThrough(seq: number): void {
		for (const key of this.groups.keys()) if (key <= seq) this.forget(key);
	}

	private forget(seq: number): void {
		const rows = this.groups.get(seq);
		if (rows === undefined) return;
		this.groups.delete(seq);
		this.events -= rows.length;
	}

	clear(): void {
		this.groups.clear();
		this.events = 0;
	}
}

/**
 * Stores the rows in groups, several groups per INSERT with bound values (cheaper than one json_each over them
 * all, which copies every group through SQL functions); `archived` for events already in the archive (adopted
 * ones, see adoption.ts). Unarchived groups are noted in `recent` when given.
 */
export function insertRawEvents(
	sql: SqlStorage,
	rows: readonly EventRow[],
	limits: ChunkLimits,
	archived = false,
	recent?: RecentGroups,
): void {
	const noting = recent !== undefined && !archived;
	const statements = INSERT_GROUPS[archived ? 0 : noting ? 2 : 1] as string[];
	const values: (string | number)[] = [];
	const written: EventRow[][] = [];
	const write = () => {
		const cursor = sql.exec<{ seq: number }>(statements[values.length / 4] as string, ...values);
		if (noting) {
			// A statement numbers its rows in the order of its VALUES.
			const seqs = cursor
				.toArray()
				.map((row) => row.seq)
				.sort((a, b) => a - b);
			for (const [i, seq] of seqs.entries()) recent.add(seq, written[i] as EventRow[]);
		}
		values.length = 0;
		written.length = 0;
	};
	let start = 0;
	for (const group of eventGroups(rows, limits)) {
		let min = (rows[start] as EventRow)[TIMESTAMP];
		let max = min;
		for (let i = start + 1; i < start + group.size; i++) {
			const at = (rows[i] as EventRow)[TIMESTAMP];
			if (at < min) min = at;
			else if (at > max) max = at;
		}
		if (noting) written.push(rows.slice(start, start + group.size));
		start += group.size;
		values.push(group.size, group.json, min, max);
		if (values.length === GROUPS_PER_INSERT * 4) write();
	}
	if (values.length > 0) write();
}

export function meteringEventOf(row: EventRow): MeteringEvent {
	const [id, kind, agentKey, type, value, metadata, timestamp, receivedAt, idempotencyKey] = row;
	return {
		id,
		kind: kind as MeteringEvent["kind"],
		agentKey,
		type,
		value,
		metadata,
		timestamp,
		receivedAt,
		idempotencyKey,
	};
}

function hasRawEvents(sql: SqlStorage): boolean {
	return (
		sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'raw_events'").toArray().length > 0
	);
}

/**
 * The events this accumulator retains whose `timestamp` is in [fromTimestamp, toTimestamp), archived or not, in
 * the order they were counted. For rebuilding aggregates from raw events.
 */
export function readRawEvents(sql: SqlStorage, fromTimestamp: string, toTimestamp: string): MeteringEvent[] {
	if (!hasRawEvents(sql)) return [];
	return sql
		.exec<{ row: string }>(
			`SELECT e.value AS row FROM raw_events AS g, json_each(g.json) AS e
			WHERE g.max_ts >= ?1 AND g.min_ts < ?2 AND e.value ->> 6 >= ?1 AND e.value ->> 6 < ?2
			ORDER BY g.seq, e.key`,
			fromTimestamp,
			toTimestamp,
		)
		.toArray()
		.map(({ row }) => meteringEventOf(JSON.parse(row) as EventRow));
}

export interface UnarchivedGroups {
	lastSeq: number | null;
	rows: EventRow[];
}

/**
 * The oldest groups not yet archived, whole, up to about `maxEvents` events (at least one group): from `recent`
 * while it holds them, the rest read from SQLite.
 */
export function readUnarchived(sql: SqlStorage, maxEvents: number, recent?: RecentGroups): UnarchivedGroups {
	const rows: EventRow[] = [];
	let lastSeq: number | null = null;
	const fits = (size: number) => lastSeq === null || rows.length + size <= maxEvents;
	const take = (seq: number, group: readonly EventRow[]) => {
		for (const row of group) rows.push(row);
		lastSeq = seq;
	};
	if (recent !== undefined && !recent.isEmpty) {
		let missing = false;
		for (const { seq, size } of sql.exec<{ seq: number; size: number }>(
			"SELECT seq, size FROM raw_events WHERE archived = 0 ORDER BY seq LIMIT ?",
			maxEvents,
		)) {
			if (!fits(size)) break;
			const group = recent.get(seq, size);
			if (group === undefined) {
				missing = true;
				break;
			}
			take(seq, group);
		}
		if (!missing) return { lastSeq, rows };
	}
	for (const { seq, size, json } of sql.exec<{ seq: number; size: number; json: string }>(
		"SELECT seq, size, json FROM raw_events WHERE archived = 0 AND seq > ? ORDER BY seq LIMIT ?",
		lastSeq ?? 0,
		maxEvents,
	)) {
		if (!fits(size)) break;
		take(seq, JSON.parse(json) as EventRow[]);
	}
	return { lastSeq, rows };
}

export function markArchived(sql: SqlStorage, lastSeq: number, recent?: RecentGroups): void {
	sql.exec("UPDATE raw_events SET archived = 1 WHERE seq <= ? AND archived = 0", lastSeq);
	recent?.forgetThrough(lastSeq);
}

export function hasUnarchived(sql: SqlStorage): boolean {
	return sql.exec("SELECT 1 FROM raw_events WHERE archived = 0 LIMIT 1").toArray().length > 0;
}

/**
 * Deletes archived groups past retention, then, while the storage is over `maxBytes`, the oldest archived ones
 * (a Durable Object's databaseSize shrinks as rows go). Never an unarchived group.
 */
export function purgeRawEvents(
	storage: DurableObjectStorage,
	now: number,
	maxBytes: number = RAW_EVENTS_MAX_BYTES,
): void {
	const sql = storage.sql;
	if (!hasRawEvents(sql)) return;
	const cutoff = new Date(now - RAW_EVENTS_RETENTION_MS).toISOString();
	deleteArchived(sql, "max_ts < ?", cutoff);
	while (sql.databaseSize > maxBytes) {
		const oldest = sql
			.exec<{ seq: number }>("SELECT seq FROM raw_events WHERE archived = 1 ORDER BY seq LIMIT 1 OFFSET 999")
			.toArray()[0]?.seq;
		const before = sql.databaseSize;
		if (oldest === undefined) deleteArchived(sql, "true");
		else deleteArchived(sql, "seq <= ?", oldest);
		if (oldest === undefined || sql.databaseSize >= before) break;
	}
}

/** Deletes archived groups matching `where`, first recording the newest timestamp they held. */
function deleteArchived(sql: SqlStorage, where: string, ...bindings: (string | number)[]): void {
	const newest = sql
		.exec<{ through: string | null }>(
			`SELECT max(max_ts) AS through FROM raw_events WHERE archived = 1 AND ${where}`,
			...bindings,
		)
		.one().through;
	if (newest === null) return;
	sql.exec(
		`INSERT INTO raw_events_purged (id, through) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET through = max(through, excluded.through)`,
		newest,
	);
	sql.exec(`DELETE FROM raw_events WHERE archived = 1 AND ${where}`, ...bindings);
}

/**
 * The instant after which this accumulator still holds every event it counted: the newest purged timestamp, and
 * never earlier than the retention cutoff (which also covers what objects purged before purges were recorded).
 * Older events may be only in the archive.
 */
export function eventsRetainedAfter(sql: SqlStorage, now: number): string {
	const cutoff = new Date(now - RAW_EVENTS_RETENTION_MS).toISOString();
	if (!hasRawEvents(sql)) return cutoff;
	const through = sql
		.exec<{ through: string }>("SELECT through FROM raw_events_purged WHERE id = 1")
		.toArray()[0]?.through;
	return through !== undefined && through > cutoff ? through : cutoff;
}

/**
 * Storage of the released v1: `pending_events (seq, size, json)`, events not yet in D1 — they become raw events,
 * not archived yet. Runs on start, where the tables exist.
 */
export function upgradeRawEventStorage(sql: SqlStorage, tables: ReadonlySet<string>): void {
	if (!tables.has("pending_events")) return;
	sql.exec(
		`INSERT INTO raw_events (size, json, min_ts, max_ts)
		SELECT p.size, p.json, (SELECT min(e.value ->> 6) FROM json_each(p.json) AS e),
			(SELECT max(e.value ->> 6) FROM json_each(p.json) AS e)
		FROM pending_events AS p ORDER BY p.seq`,
	);
	sql.exec("DROP TABLE pending_events");
}

/** A page of retained events for the explorer: newest `timestamp` first, then id, after `before` when given. */
export interface RawEventQuery {
	/** [from, to) on timestamps. */
	from: string;
	to: string;
	/** The last event of the previous page: the page holds what sorts after it. */
	before: { timestamp: string; id: string } | null;
	agentKey?: string;
	kind?: string;
	type?: string;
	limit: number;
}

/**
 * Reads groups by their newest timestamp, newest first, and stops once `limit` matching events are newer than
 * any group not yet read: groups are mostly in time order, so a page opens a few of them whatever the number
 * stored (events sent with old timestamps only mean reading a few more).
 */
export function newestRawEvents(sql: SqlStorage, query: RawEventQuery): EventRow[] {
	if (!hasRawEvents(sql)) return [];
	const upper = query.before === null ? query.to : minString(query.to, `${query.before.timestamp}\u0000`);
	const groups = sql.exec<{ json: string; max_ts: string }>(
		`SELECT json, max_ts FROM raw_events WHERE max_ts >= ? AND min_ts < ? ORDER BY max_ts DESC`,
		query.from,
		upper,
	);
	const found: EventRow[] = [];
	const sortsAfterCursor = (row: EventRow) =>
		query.before === null ||
		row[TIMESTAMP] < query.before.timestamp ||
		(row[TIMESTAMP] === query.before.timestamp && row[0] < query.before.id);
	for (const group of groups) {
		// Every event of this group and the ones after is at or before its max_ts.
		if (found.length >= query.limit) {
			found.sort(newestFirst);
			const last = found[query.limit - 1] as EventRow;
			if (last[TIMESTAMP] > group.max_ts) break;
		}
		for (const row of JSON.parse(group.json) as EventRow[]) {
			const at = row[TIMESTAMP];
			if (at < query.from || at >= query.to || !sortsAfterCursor(row)) continue;
			if (query.agentKey !== undefined && row[2] !== query.agentKey) continue;
			if (query.kind !== undefined && row[1] !== query.kind) continue;
			if (query.type !== undefined && row[3] !== query.type) continue;
			found.push(row);
		}
	}
	found.sort(newestFirst);
	return found.slice(0, query.limit);
}

function minString(a: string, b: string): string {
	return a < b ? a : b;
}

export function newestFirst(a: EventRow, b: EventRow): number {
	if (a[TIMESTAMP] !== b[TIMESTAMP]) return a[TIMESTAMP] < b[TIMESTAMP] ? 1 : -1;
	return a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0;
}
