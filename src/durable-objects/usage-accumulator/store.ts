/**
 * The accumulator's own SQLite storage. Every write is synchronous and runs in one transaction per call, so an
 * event, its dedupe key, its aggregates (aggregates.ts) and its outbox row are stored together or not at all.
 *
 * - raw_events: every event counted, in small groups, kept until archived and for 36 days (raw-events.ts).
 * - dedupe_keys: per agent key, idempotency key → the original event, for 36 days (dedupe.ts).
 * - holdings: per agent key, the newest membership generation told, whether this accumulator holds the key, and
 *   the generation at which it took the key's dedupe keys over from earlier holders (handover.ts).
 * - daily, costs: the running aggregates, with version counters (see flush.ts); daily_unbilled: the day
 *   aggregates of events that reached a subscription with a timestamp before its start (§19).
 * - set_aside, absorbed: unbilled usage adopted by a subscription (adoption.ts).
 * - outbox: outcome.completed webhook events waiting for the flush.
 */
import { Decimal } from "../../lib/decimal";
import { newId } from "../../lib/ids";
import type { UsageAggregate } from "../../pricing/quantities";
import {
	ADOPTION_SCHEMA,
	type AdoptedEvent,
	absorbedThrough,
	markAbsorbed,
	purgeSetAside,
	setAside,
	unabsorbed,
} from "./adoption";
import { AggregateDeltas, readUsage, StoredValues } from "./aggregates";
import { ALERTS_SCHEMA } from "./alerts";
import { type AccumulatorIdentity, parseAccumulatorName, subscriptionOf } from "./client";
import {
	DEDUPE_SCHEMA,
	DEDUPE_TTL_MS,
	type DedupeRow,
	dedupeKeyOf,
	dedupeMapKey,
	dedupePage,
	insertDedupeRows,
	purgeExpiredDedupeRows,
	readOriginals,
	storedEventRow,
	upgradeDedupeStorage,
} from "./dedupe";
import { type ChunkLimits, DEFAULT_CHUNK_LIMITS, type EventRow, eventRow } from "./flush";
import type { Handover } from "./handover";
import { type CountObserver, METRICS_SCHEMA } from "./metrics";
import {
	insertRawEvents,
	meteringEventOf,
	RAW_EVENTS_SCHEMA,
	RecentGroups,
	upgradeRawEventStorage,
} from "./raw-events";
import type {
	EventResult,
	HoldingChange,
	MeteringEvent,
	RecordRequest,
	RecordResponse,
	StoredEvent,
} from "./types";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS holdings (
	agent_key TEXT PRIMARY KEY, generation INTEGER NOT NULL, held INTEGER NOT NULL, imported INTEGER NOT NULL DEFAULT -1);
${RAW_EVENTS_SCHEMA}${DEDUPE_SCHEMA}CREATE TABLE IF NOT EXISTS daily (
	day TEXT NOT NULL, agent_key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
	count INTEGER NOT NULL, sum TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, agent_key, kind, type, field));
CREATE INDEX IF NOT EXISTS daily_unflushed ON daily (day) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS daily_unbilled (
	day TEXT NOT NULL, agent_key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
	count INTEGER NOT NULL, sum TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, agent_key, kind, type, field));
CREATE INDEX IF NOT EXISTS daily_unbilled_unflushed ON daily_unbilled (day) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS costs (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, cost_type TEXT NOT NULL, currency TEXT NOT NULL,
	amount TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (period, agent_key, cost_type, currency));
CREATE INDEX IF NOT EXISTS costs_unflushed ON costs (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, data TEXT NOT NULL);
${METRICS_SCHEMA}${ALERTS_SCHEMA}${ADOPTION_SCHEMA}`;

/** What a record call did: the answer, and the instances to take over before their events (`awaiting`) count. */
export interface StoreRecordResult {
	response: RecordResponse;
	handovers: Handover[];
	/** Indices of events left out until their instance is taken over. */
	awaiting: number[];
}

export type StoredIdentity = AccumulatorIdentity & {
	name: string;
	accountId: string | null;
	billableFrom: string | null;
};

/** billableFrom: a subscription's start (§19); its events with earlier timestamps are not billable. */
type Meta = { name: string | null; accountId: string | null; billableFrom: string | null };

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
	// The stored sums of the daily rows written here, so recording need not read them back (aggregates.ts).
	private readonly dailySums = new StoredValues();
	private readonly unbilledSums = new StoredValues();
	/** The quantities of metric rows written here (metrics.ts), for the observers that write them with the events. */
	readonly metricQuantities = new StoredValues();
	// The holdings rows read here, by agent key (null: none stored), so that a warm record call reads none. Every
	// write to a key's row forgets the key; a failed transaction forgets them all.
	private readonly knownHoldings = new Map<string, HoldingRow | null>();
	/** The raw event groups stored here and not archived yet, for the archive (raw-events.ts). */
	readonly recentGroups = new RecentGroups();

	constructor(readonly storage: DurableObjectStorage) {
		this.sql = storage.sql;
		const tables = new Set(
			this.sql
				.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
				.toArray()
				.map((row) => row.name),
		);
		this.hasTables = tables.has("meta");
		if (this.hasTables) {
			// Tables added by a later version are created, and storage of an earlier one converted, at once.
			storage.transactionSync(() => {
				this.sql.exec(SCHEMA);
				upgradeDedupeStorage(this.sql, tables);
				upgradeRawEventStorage(this.sql, tables);
			});
		}
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
		if (!this.hasTables) return { name: null, accountId: null, billableFrom: null };
		if (this.meta === undefined) {
			const rows = this.sql
				.exec<{ key: string; value: string | null }>("SELECT key, value FROM meta")
				.toArray();
			const meta = new Map(rows.map((r) => [r.key, r.value]));
			this.meta = {
				name: meta.get("name") ?? null,
				accountId: meta.get("account_id") ?? null,
				billableFrom: meta.get("billable_from") ?? null,
			};
		}
		return this.meta;
	}

	identity(): StoredIdentity | null {
		const { name, accountId, billableFrom } = this.storedMeta();
		if (!name) return null;
		return { ...parseAccumulatorName(name), name, accountId, billableFrom };
	}

	/**
	 * Writes the accumulator's name, account and billable start, only when they are not stored already
	 * (`billableFrom` undefined: keep what is stored).
	 */
	remember(name: string, accountId: string | null, billableFrom?: string | null): void {
		const stored = this.storedMeta();
		const from = billableFrom === undefined ? stored.billableFrom : billableFrom;
		if (stored.name === name && stored.accountId === accountId && stored.billableFrom === from) return;
		this.createTables();
		this.meta = undefined;
		this.sql.exec(
			"INSERT OR REPLACE INTO meta (key, value) VALUES ('name', ?), ('account_id', ?), ('billable_from', ?)",
			name,
			accountId,
			from,
		);
		this.meta = { name, accountId, billableFrom: from };
	}

	/** A transaction that, if it fails, leaves no cached knowledge of what it may have written. */
	private transaction<T>(work: () => T): T {
		try {
			return this.storage.transactionSync(work);
		} catch (error) {
			this.meta = undefined;
			this.dailySums.clear();
			this.unbilledSums.clear();
			this.metricQuantities.clear();
			this.knownHoldings.clear();
			this.recentGroups.clear();
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
		for (const [agentKey] of rows) this.knownHoldings.delete(agentKey);
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
	 * released; a subscription's holds none it was not told of. A held key whose dedupe keys were not yet taken
	 * over at its generation (handover.ts) is not counted yet: it is listed in `handovers`.
	 */
	private claimAndHold(
		agentKeys: readonly string[],
		claims: Record<string, number>,
		identity: AccumulatorIdentity,
	): { held: Set<string>; handovers: Handover[] } {
		const known = this.holdingRows([...new Set([...agentKeys, ...Object.keys(claims)])]);
		const newer = Object.entries(claims).filter(
			([agentKey, generation]) => generation > (known.get(agentKey)?.generation ?? -1),
		);
		this.applyHoldingRows(newer.map(([agentKey, generation]) => [agentKey, generation, 1]));
		const claimed = new Map(newer);
		const held = new Set<string>();
		const handovers: Handover[] = [];
		for (const agentKey of agentKeys) {
			const row = known.get(agentKey);
			const claim = claimed.get(agentKey);
			// Generation 0: the instance was never in a subscription, so no other accumulator has its keys.
			if (claim !== undefined) {
				if (claim === 0 || (row !== undefined && row.imported >= claim)) held.add(agentKey);
				else handovers.push({ agentKey, generation: claim });
			} else if (row === undefined) {
				if (identity.kind === "inst" && identity.id === agentKey) held.add(agentKey);
			} else if (row.held === 1) {
				if (row.generation === 0 || row.imported >= row.generation) held.add(agentKey);
				else handovers.push({ agentKey, generation: row.generation });
			}
		}
		return { held, handovers };
	}

	/** The stored holdings rows of the keys, read only for keys not known from an earlier read. */
	private holdingRows(keys: readonly string[]): Map<string, HoldingRow> {
		const rows = new Map<string, HoldingRow>();
		const unknown: string[] = [];
		for (const key of keys) {
			const row = this.knownHoldings.get(key);
			if (row === undefined) unknown.push(key);
			else if (row !== null) rows.set(key, row);
		}
		if (unknown.length === 0) return rows;
		// Bound values for the few keys of most calls (cheaper than json_each), json_each beyond.
		const stored =
			unknown.length <= FEW_KEYS
				? this.sql.exec<HoldingRow>(
						`SELECT agent_key, generation, held, imported FROM holdings WHERE agent_key IN (${unknown.map(() => "?").join(", ")})`,
						...unknown,
					)
				: this.sql.exec<HoldingRow>(
						"SELECT agent_key, generation, held, imported FROM holdings WHERE agent_key IN (SELECT value FROM json_each(?))",
						JSON.stringify(unknown),
					);
		for (const row of stored) rows.set(row.agent_key, row);
		if (this.knownHoldings.size + unknown.length > MAX_KNOWN_HOLDINGS) this.knownHoldings.clear();
		for (const key of unknown) this.knownHoldings.set(key, rows.get(key) ?? null);
		return rows;
	}

	/**
	 * Releases the instance at `generation` (from then on this accumulator refuses its events, unless a newer
	 * generation gives it back) and answers a page of its dedupe keys, in one transaction (handover.ts).
	 */
	release(
		agentKey: string,
		generation: number,
		after: string | null,
		limit: number,
		now: number,
	): DedupeRow[] {
		this.createTables();
		return this.transaction(() => {
			this.applyHoldingRows([[agentKey, generation, 0]]);
			return dedupePage(this.sql, agentKey, after, limit, now);
		});
	}

	/** Keys handed over by an earlier holder; a key already here keeps its original. */
	storeHandedKeys(rows: DedupeRow[]): void {
		if (rows.length === 0) return;
		this.createTables();
		this.transaction(() => insertDedupeRows(this.sql, rows, false));
	}

	/** After every earlier holder handed its keys over: the instance's events are counted from now on. */
	markTakenOver({ agentKey, generation }: Handover): void {
		this.createTables();
		this.knownHoldings.delete(agentKey);
		this.sql.exec(
			"UPDATE holdings SET imported = ?2 WHERE agent_key = ?1 AND generation = ?2 AND imported < ?2",
			agentKey,
			generation,
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
	 * accumulator was told means it holds the key (it missed the announcement). Events of instances still to be
	 * taken over are left out (null, their index in `awaiting`): the object takes them over and records them then.
	 */
	record(
		request: RecordRequest,
		now: number,
		limits: ChunkLimits = DEFAULT_CHUNK_LIMITS,
		observer?: CountObserver,
	): StoreRecordResult {
		const identity = parseAccumulatorName(request.name);
		const subscriptionId = subscriptionOf(identity);
		this.createTables();
		return this.transaction(() => {
			this.remember(request.name, request.accountId, request.billableFrom);
			const events = request.events;
			const agentKeys = [...new Set(events.map((e) => e.agentKey))];
			const { held, handovers } = this.claimAndHold(agentKeys, request.claims, identity);
			const waiting = new Set(handovers.map((h) => h.agentKey));
			const originals = this.originals(events, now);
			const refused = new Set<string>();
			const awaiting: number[] = [];
			const counting = this.counting(
				subscriptionId === null ? null : this.storedMeta().billableFrom,
				observer,
			);
			const newEvents: EventRow[] = [];
			const newDedupe: DedupeRow[] = [];
			const outcomes: StoredEvent[] = [];
			const results: EventResult[] = [];
			const expiresAt = now + DEDUPE_TTL_MS;

			for (const [index, event] of events.entries()) {
				if (!held.has(event.agentKey)) {
					if (waiting.has(event.agentKey)) awaiting.push(index);
					else refused.add(event.agentKey);
					results.push(null);
					continue;
				}
				const dedupeKey = dedupeKeyOf(event);
				const mapKey = dedupeKey === null ? null : dedupeMapKey(event.agentKey, dedupeKey);
				if (mapKey !== null) {
					const original = originals.get(mapKey);
					if (original) {
						results.push({ status: "duplicate", event: original });
						continue;
					}
				}
				newEvents.push(eventRow(event));
				counting.count(event);
				// Most events need no stored copy: subscription_id is the accumulator's own, given at flush time.
				if (dedupeKey !== null || event.kind === "outcome") {
					const stored = storedEvent(event, subscriptionId);
					if (mapKey !== null && dedupeKey !== null) {
						originals.set(mapKey, stored);
						newDedupe.push([event.agentKey, dedupeKey, storedEventRow(stored), expiresAt]);
					}
					if (stored.kind === "outcome") outcomes.push(stored);
				}
				results.push(PROCESSED);
			}
			insertRawEvents(this.sql, newEvents, limits, false, this.recentGroups);
			insertDedupeRows(this.sql, newDedupe, true);
			counting.applyTo();
			this.queueOutcomesCompleted(outcomes, request.accountId);
			return { response: { results, refused: [...refused] }, handovers, awaiting };
		});
	}

	/**
	 * What newly stored events add, applied inside the transaction that stored them: billable events to the daily
	 * aggregates and the observers; a subscription's events from before its start (`billableFrom`) apart, in
	 * daily_unbilled, since they are not billable (§19).
	 */
	private counting(billableFrom: string | null, observer?: CountObserver) {
		const billable = new AggregateDeltas();
		const unbilled = new AggregateDeltas("daily_unbilled");
		return {
			count: (event: MeteringEvent) => {
				if (billableFrom !== null && event.timestamp < billableFrom) unbilled.count(event);
				else {
					billable.count(event);
					observer?.count(event);
				}
			},
			applyTo: () => {
				billable.applyTo(this.sql, this.dailySums);
				unbilled.applyTo(this.sql, this.unbilledSums);
				observer?.applyTo(this.sql);
			},
		};
	}

	/** The stored originals of the events' idempotency keys, by dedupeMapKey. */
	private originals(events: readonly MeteringEvent[], now: number): Map<string, StoredEvent> {
		const pairs = events.flatMap((event): [string, string][] => {
			const key = dedupeKeyOf(event);
			return key === null ? [] : [[event.agentKey, key]];
		});
		return readOriginals(this.sql, pairs, now);
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

	/** Usage counted here between two UTC days: billable only, or also what was not billable (§19). */
	usage(startDay: string, endDay: string, agentKey?: string, unbilledToo = false): UsageAggregate[] {
		if (!this.hasTables) return [];
		return readUsage(
			this.sql,
			startDay,
			endDay,
			agentKey,
			unbilledToo ? ["daily", "daily_unbilled"] : ["daily"],
		);
	}

	purgeExpiredDedupeKeys(now: number): void {
		if (!this.hasTables) return;
		purgeExpiredDedupeRows(this.sql, now);
		purgeSetAside(this.sql, now);
	}

	/** Adoption, step 1 (adoption.ts), on an instance's accumulator. */
	setAside(
		adoption: { subscriptionId: string; from: string; generation: number },
		after: string | null,
		limit: number,
		now: number,
	): AdoptedEvent[] {
		const identity = this.identity();
		if (identity === null || identity.kind !== "inst") return [];
		return this.transaction(() => {
			this.applyHoldingRows([[identity.id, adoption.generation, 0]]);
			// Setting aside lowers day rows without the cache of sums, and rewrites raw event groups: what the
			// caches knew of them is stale.
			this.dailySums.clear();
			this.recentGroups.clear();
			return setAside(this.sql, adoption.subscriptionId, adoption.from, after, limit, now);
		});
	}

	absorbedThrough(agentKey: string): string | null {
		return this.hasTables ? absorbedThrough(this.sql, agentKey) : null;
	}

	/**
	 * Adoption, step 2, on the subscription's accumulator: counts the events of the page past the instance's mark
	 * as its own, with its observers, in one transaction. Their outcome.completed were sent when first counted.
	 * Answers how many it counted.
	 */
	absorb(
		request: { name: string; accountId: string | null; billableFrom: string | null; agentKey: string },
		page: readonly AdoptedEvent[],
		limits: ChunkLimits,
		observer?: CountObserver,
	): number {
		this.createTables();
		return this.transaction(() => {
			this.remember(request.name, request.accountId, request.billableFrom);
			const { fresh, through } = unabsorbed(this.sql, request.agentKey, page);
			if (through === null) return 0;
			const counting = this.counting(request.billableFrom, observer);
			for (const { row } of fresh) counting.count(meteringEventOf(row));
			insertRawEvents(
				this.sql,
				fresh.filter((e) => !e.archived).map((e) => e.row),
				limits,
			);
			insertRawEvents(
				this.sql,
				fresh.filter((e) => e.archived).map((e) => e.row),
				limits,
				true,
			);
			counting.applyTo();
			markAbsorbed(this.sql, request.agentKey, through);
			return fresh.length;
		});
	}
}

const PROCESSED = "processed" as const;
const FEW_KEYS = 16;
const MAX_KNOWN_HOLDINGS = 10_000;
type HoldingRow = { agent_key: string; generation: number; held: number; imported: number };

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
