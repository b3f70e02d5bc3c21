/**
 * The accumulator's own SQLite storage. Every write is synchronous and runs in one transaction per call, so an
 * event, its dedupe key, its aggregates (aggregates.ts) and its outbox row are stored together or not at all.
 *
 * - pending_events: events counted but not yet in D1, in small groups (flush.ts: eventRow, eventGroups), joined
 *   into the flush's INSERT statements and deleted once flushed.
 * - dedupe: idempotency key → the original event, for 36 days (the contract promises at least 35).
 * - holdings: per agent key, the newest membership generation told and whether this accumulator holds the key.
 * - daily, costs: the running aggregates, with version counters (see flush.ts).
 * - outbox: outcome.completed webhook events waiting for the flush.
 */
import { Decimal } from "../../lib/decimal";
import { newId } from "../../lib/ids";
import type { UsageAggregate } from "../../pricing/quantities";
import { AggregateDeltas, readUsage } from "./aggregates";
import { ALERTS_SCHEMA } from "./alerts";
import { type AccumulatorIdentity, parseAccumulatorName, subscriptionOf } from "./client";
import {
	type ChunkLimits,
	DEFAULT_CHUNK_LIMITS,
	type EventGroup,
	type EventRow,
	eventGroups,
	eventRow,
	eventRowFromLegacy,
} from "./flush";
import { type CountObserver, METRICS_SCHEMA } from "./metrics";
import type {
	EventResult,
	HoldingChange,
	MeteringEvent,
	RecordRequest,
	RecordResponse,
	StoredEvent,
} from "./types";

const DEDUPE_TTL_MS = 36 * 24 * 60 * 60 * 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS holdings (agent_key TEXT PRIMARY KEY, generation INTEGER NOT NULL, held INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, size INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dedupe (key TEXT PRIMARY KEY, event TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS dedupe_expiry ON dedupe (expires_at);
CREATE TABLE IF NOT EXISTS daily (
	day TEXT NOT NULL, agent_key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
	count INTEGER NOT NULL, sum TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, agent_key, kind, type, field));
CREATE INDEX IF NOT EXISTS daily_unflushed ON daily (day) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS costs (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, cost_type TEXT NOT NULL, currency TEXT NOT NULL,
	amount TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (period, agent_key, cost_type, currency));
CREATE INDEX IF NOT EXISTS costs_unflushed ON costs (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, data TEXT NOT NULL);
${METRICS_SCHEMA}${ALERTS_SCHEMA}`;

export type StoredIdentity = AccumulatorIdentity & { name: string; accountId: string | null };

type Meta = { name: string | null; accountId: string | null };

/**
 * Statements work on sets, so a call costs a handful of them whatever the number of its events: rows travel as
 * one JSON parameter (json_each), as in the flush to D1. Event groups are the exception (see insertEvents).
 *
 * The tables are created by the first write. Reading an accumulator that never counted anything (usage by
 * agent_key asks each instance's own one) then stores nothing: no empty database is left behind.
 */
export class AccumulatorStore {
	readonly sql: SqlStorage;
	// What the meta table holds, once read; undefined after a transaction that may have been rolled back.
	private meta: Meta | undefined;
	private hasTables: boolean;

	constructor(readonly storage: DurableObjectStorage) {
		this.sql = storage.sql;
		const tables = new Set(
			this.sql
				.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
				.toArray()
				.map((row) => row.name),
		);
		this.hasTables = tables.has("meta");
		// Tables added by a later version are created at once where the others exist.
		if (this.hasTables) this.sql.exec(SCHEMA);
		if (tables.has("events") || tables.has("event_groups")) this.convertLegacyEvents(tables);
	}

	/**
	 * Events left by earlier versions, as usage_events objects: one row each in `events` (regrouped by ten), then
	 * JSON arrays of them in `event_groups`. They are rewritten as the rows of today and flushed like the rest;
	 * rewritten, a group is smaller than it was.
	 */
	private convertLegacyEvents(tables: Set<string>): void {
		this.storage.transactionSync(() => {
			if (tables.has("event_groups")) {
				this.sql.exec(
					`INSERT INTO pending_events (size, json)
					SELECT g.size, (SELECT json_group_array(${eventRowFromLegacy("e.value")}) FROM json_each(g.json) AS e)
					FROM event_groups AS g ORDER BY g.seq`,
				);
				this.sql.exec("DROP TABLE event_groups");
			}
			if (tables.has("events")) {
				this.sql.exec(
					`INSERT INTO pending_events (size, json)
					SELECT count(*), json_group_array(${eventRowFromLegacy("row")}) FROM events
					GROUP BY (seq - 1) / 10 ORDER BY min(seq)`,
				);
				this.sql.exec("DROP TABLE events");
			}
		});
	}

	/** Whether anything was ever written here; reads of an accumulator without tables answer "nothing". */
	get isEmpty(): boolean {
		return !this.hasTables;
	}

	private createTables(): void {
		if (this.hasTables) return;
		this.sql.exec(SCHEMA);
		this.hasTables = true;
	}

	private storedMeta(): Meta {
		if (!this.hasTables) return { name: null, accountId: null };
		if (this.meta === undefined) {
			const rows = this.sql
				.exec<{ key: string; value: string | null }>("SELECT key, value FROM meta")
				.toArray();
			const meta = new Map(rows.map((r) => [r.key, r.value]));
			this.meta = { name: meta.get("name") ?? null, accountId: meta.get("account_id") ?? null };
		}
		return this.meta;
	}

	identity(): StoredIdentity | null {
		const { name, accountId } = this.storedMeta();
		if (!name) return null;
		return { ...parseAccumulatorName(name), name, accountId };
	}

	/** Writes the accumulator's name and account, only when they are not stored already. */
	remember(name: string, accountId: string | null): void {
		const stored = this.storedMeta();
		if (stored.name === name && stored.accountId === accountId) return;
		this.createTables();
		this.meta = undefined;
		this.sql.exec(
			"INSERT OR REPLACE INTO meta (key, value) VALUES ('name', ?), ('account_id', ?)",
			name,
			accountId,
		);
		this.meta = { name, accountId };
	}

	/** A transaction that, if it fails, leaves no cached knowledge of what it may have written. */
	private transaction<T>(work: () => T): T {
		try {
			return this.storage.transactionSync(work);
		} catch (error) {
			this.meta = undefined;
			throw error;
		}
	}

	/** Applies membership changes; a change older than the generation known for its key is ignored. */
	applyHoldings(changes: readonly HoldingChange[]): void {
		this.createTables();
		this.transaction(() =>
			this.applyHoldingRows(changes.map((c) => [c.agentKey, c.generation, c.held ? 1 : 0])),
		);
	}

	private applyHoldingRows(rows: [agentKey: string, generation: number, held: 0 | 1][]): void {
		if (rows.length === 0) return;
		this.sql.exec(
			`INSERT INTO holdings (agent_key, generation, held)
			SELECT h.value ->> 0, h.value ->> 1, h.value ->> 2 FROM json_each(?) AS h WHERE true
			ON CONFLICT (agent_key) DO UPDATE SET generation = excluded.generation, held = excluded.held
			WHERE excluded.generation > holdings.generation`,
			JSON.stringify(rows),
		);
	}

	/**
	 * Applies the router's claims and answers which of the keys this accumulator holds: one read, and a write
	 * only for claims newer than what it knows. An instance accumulator holds its own instance until told it was
	 * released; a subscription's holds none it was not told of.
	 */
	private claimAndHold(
		agentKeys: readonly string[],
		claims: Record<string, number>,
		identity: AccumulatorIdentity,
	): Set<string> {
		const keys = [...new Set([...agentKeys, ...Object.keys(claims)])];
		const known = new Map(
			this.sql
				.exec<{ agent_key: string; generation: number; held: number }>(
					"SELECT agent_key, generation, held FROM holdings WHERE agent_key IN (SELECT value FROM json_each(?))",
					JSON.stringify(keys),
				)
				.toArray()
				.map((row) => [row.agent_key, row]),
		);
		const newer = Object.entries(claims).filter(
			([agentKey, generation]) => generation > (known.get(agentKey)?.generation ?? -1),
		);
		this.applyHoldingRows(newer.map(([agentKey, generation]) => [agentKey, generation, 1]));
		const claimed = new Set(newer.map(([agentKey]) => agentKey));
		return new Set(
			agentKeys.filter((agentKey) => {
				if (claimed.has(agentKey)) return true;
				const row = known.get(agentKey);
				return row ? row.held === 1 : identity.kind === "inst" && identity.id === agentKey;
			}),
		);
	}

	holdings(): HoldingChange[] {
		if (!this.hasTables) return [];
		return this.sql
			.exec<{ agent_key: string; generation: number; held: number }>(
				"SELECT * FROM holdings ORDER BY agent_key",
			)
			.toArray()
			.map((r) => ({ agentKey: r.agent_key, generation: r.generation, held: r.held === 1 }));
	}

	/**
	 * Counts the events of held instances, in order; a repeated idempotency key (stored, or earlier in the same
	 * request) answers the original event. The router's claims are applied first: a claim newer than what this
	 * accumulator was told means it holds the key (it missed the announcement).
	 */
	record(
		request: RecordRequest,
		now: number,
		limits: ChunkLimits = DEFAULT_CHUNK_LIMITS,
		observer?: CountObserver,
	): RecordResponse {
		const identity = parseAccumulatorName(request.name);
		const subscriptionId = subscriptionOf(identity);
		this.createTables();
		return this.transaction(() => {
			this.remember(request.name, request.accountId);
			const events = request.events;
			const agentKeys = [...new Set(events.map((e) => e.agentKey))];
			const held = this.claimAndHold(agentKeys, request.claims, identity);
			const originals = this.originals(events, now);
			const refused = new Set<string>();
			const deltas = new AggregateDeltas();
			const newEvents: EventRow[] = [];
			const newDedupe: [key: string, event: string][] = [];
			const outcomes: StoredEvent[] = [];
			const results: EventResult[] = [];

			for (const event of events) {
				if (!held.has(event.agentKey)) {
					refused.add(event.agentKey);
					results.push(null);
					continue;
				}
				const dedupeKey = dedupeKeyOf(event);
				if (dedupeKey !== null) {
					const original = originals.get(dedupeKey);
					if (original) {
						results.push({ status: "duplicate", event: original });
						continue;
					}
				}
				newEvents.push(eventRow(event));
				deltas.count(event);
				observer?.count(event);
				// Most events need no stored copy: subscription_id is the accumulator's own, given at flush time.
				if (dedupeKey !== null || event.kind === "outcome") {
					const stored = storedEvent(event, subscriptionId);
					if (dedupeKey !== null) {
						originals.set(dedupeKey, stored);
						newDedupe.push([dedupeKey, JSON.stringify(stored)]);
					}
					if (stored.kind === "outcome") outcomes.push(stored);
				}
				results.push(PROCESSED);
			}
			this.insertEvents(eventGroups(newEvents, limits));
			this.insertDedupe(newDedupe, now + DEDUPE_TTL_MS);
			deltas.applyTo(this.sql);
			observer?.applyTo(this.sql);
			this.queueOutcomesCompleted(outcomes, request.accountId);
			return { results, refused: [...refused] };
		});
	}

	/** The stored originals of the events' idempotency keys, by dedupe key. */
	private originals(events: readonly MeteringEvent[], now: number): Map<string, StoredEvent> {
		const keys = events.flatMap((event) => dedupeKeyOf(event) ?? []);
		if (keys.length === 0) return new Map();
		return new Map(
			this.sql
				.exec<{ key: string; event: string }>(
					"SELECT key, event FROM dedupe WHERE key IN (SELECT value FROM json_each(?)) AND expires_at > ?",
					JSON.stringify(keys),
					now,
				)
				.toArray()
				.map((row) => [row.key, JSON.parse(row.event) as StoredEvent]),
		);
	}

	private insertEvents(groups: EventGroup[]): void {
		// One statement per group: cheaper than one json_each over them all, which SQLite must parse again.
		for (const group of groups) {
			this.sql.exec("INSERT INTO pending_events (size, json) VALUES (?, ?)", group.size, group.json);
		}
	}

	private insertDedupe(rows: [key: string, event: string][], expiresAt: number): void {
		if (rows.length === 0) return;
		// REPLACE: an expired key that was not purged yet is taken over by its new event.
		this.sql.exec(
			`INSERT OR REPLACE INTO dedupe (key, event, expires_at)
			SELECT d.value ->> 0, d.value ->> 1, ? FROM json_each(?) AS d`,
			expiresAt,
			JSON.stringify(rows),
		);
	}

	/** outcome.completed, with the data of §13; ids are fixed now so a repeated flush writes each once. */
	private queueOutcomesCompleted(outcomes: StoredEvent[], accountId: string | null): void {
		if (outcomes.length === 0) return;
		const rows = outcomes.map((outcome) => [
			newId("evt"),
			JSON.stringify({
				outcome_id: outcome.id,
				agent_key: outcome.agentKey,
				outcome_type: outcome.type,
				value: Decimal.from(outcome.value ?? "0").toNumber(),
				subscription_id: outcome.subscriptionId,
				account_id: accountId,
				timestamp: outcome.timestamp,
			}),
		]);
		this.sql.exec(
			`INSERT INTO outbox (id, event, data)
			SELECT o.value ->> 0, 'outcome.completed', o.value ->> 1 FROM json_each(?) AS o`,
			JSON.stringify(rows),
		);
	}

	usage(startDay: string, endDay: string, agentKey?: string): UsageAggregate[] {
		if (!this.hasTables) return [];
		return readUsage(this.sql, startDay, endDay, agentKey);
	}

	purgeExpiredDedupeKeys(now: number): void {
		if (!this.hasTables) return;
		this.sql.exec("DELETE FROM dedupe WHERE expires_at <= ?", now);
	}
}

const PROCESSED = "processed" as const;

function dedupeKeyOf(event: MeteringEvent): string | null {
	return event.idempotencyKey === null ? null : `${event.kind}:${event.idempotencyKey}`;
}

/** Property by property: a spread of the parsed object is slower, and this runs per event of some batches. */
function storedEvent(event: MeteringEvent, subscriptionId: string | null): StoredEvent {
	return {
		id: event.id,
		kind: event.kind,
		agentKey: event.agentKey,
		type: event.type,
		value: event.value,
		metadata: event.metadata,
		timestamp: event.timestamp,
		receivedAt: event.receivedAt,
		idempotencyKey: event.idempotencyKey,
		subscriptionId,
	};
}
