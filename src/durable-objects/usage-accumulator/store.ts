/**
 * The accumulator's own SQLite storage. Every write is synchronous and runs in one transaction per call, so an
 * event, its dedupe key, its aggregates (aggregates.ts) and its outbox row are stored together or not at all.
 *
 * - events: counted but not yet in D1, as usage_events rows (deleted once flushed).
 * - dedupe: idempotency key → the original event, for 36 days (the contract promises at least 35).
 * - holdings: per agent key, the newest membership generation told and whether this accumulator holds the key.
 * - daily, costs: the running aggregates, with version counters (see flush.ts).
 * - outbox: outcome.completed webhook events waiting for the flush.
 */
import { Decimal } from "../../lib/decimal";
import { newId } from "../../lib/ids";
import type { UsageAggregate } from "../../pricing/quantities";
import { AggregateDeltas, readUsage } from "./aggregates";
import { type AccumulatorIdentity, parseAccumulatorName } from "./client";
import type { EventResult, HoldingChange, RecordRequest, RecordResponse, StoredEvent } from "./types";

const DEDUPE_TTL_MS = 36 * 24 * 60 * 60 * 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS holdings (agent_key TEXT PRIMARY KEY, generation INTEGER NOT NULL, held INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, row TEXT NOT NULL);
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
`;

export type StoredIdentity = AccumulatorIdentity & { name: string; accountId: string | null };

export class AccumulatorStore {
	readonly sql: SqlStorage;

	constructor(readonly storage: DurableObjectStorage) {
		this.sql = storage.sql;
		this.sql.exec(SCHEMA);
	}

	identity(): StoredIdentity | null {
		const rows = this.sql
			.exec<{ key: string; value: string | null }>("SELECT key, value FROM meta")
			.toArray();
		const meta = new Map(rows.map((r) => [r.key, r.value]));
		const name = meta.get("name");
		if (!name) return null;
		return { ...parseAccumulatorName(name), name, accountId: meta.get("account_id") ?? null };
	}

	remember(name: string, accountId: string | null): void {
		this.sql.exec(
			"INSERT OR REPLACE INTO meta (key, value) VALUES ('name', ?), ('account_id', ?)",
			name,
			accountId,
		);
	}

	/** Applies membership changes; a change older than the generation known for its key is ignored. */
	applyHoldings(changes: readonly HoldingChange[]): void {
		this.storage.transactionSync(() => {
			for (const change of changes) this.applyHolding(change);
		});
	}

	private applyHolding({ agentKey, generation, held }: HoldingChange): void {
		this.sql.exec(
			`INSERT INTO holdings (agent_key, generation, held) VALUES (?, ?, ?)
			ON CONFLICT (agent_key) DO UPDATE SET generation = excluded.generation, held = excluded.held
			WHERE excluded.generation > holdings.generation`,
			agentKey,
			generation,
			held ? 1 : 0,
		);
	}

	/** An instance accumulator holds its own instance until told it was released; a subscription's holds none. */
	holds(agentKey: string, identity: AccumulatorIdentity): boolean {
		const row = this.sql
			.exec<{ held: number }>("SELECT held FROM holdings WHERE agent_key = ?", agentKey)
			.toArray()[0];
		if (row) return row.held === 1;
		return identity.kind === "inst" && identity.id === agentKey;
	}

	holdings(): HoldingChange[] {
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
	record(request: RecordRequest, now: number): RecordResponse {
		const identity = parseAccumulatorName(request.name);
		const subscriptionId = identity.kind === "sub" ? identity.id : null;
		return this.storage.transactionSync(() => {
			this.remember(request.name, request.accountId);
			for (const [agentKey, generation] of Object.entries(request.claims)) {
				this.applyHolding({ agentKey, generation, held: true });
			}
			const refused = new Set<string>();
			const deltas = new AggregateDeltas();
			const seenNow = new Map<string, StoredEvent>();

			const results = request.events.map((event): EventResult => {
				if (refused.has(event.agentKey)) return null;
				if (!this.holds(event.agentKey, identity)) {
					refused.add(event.agentKey);
					return null;
				}
				const dedupeKey = event.idempotencyKey === null ? null : `${event.kind}:${event.idempotencyKey}`;
				if (dedupeKey !== null) {
					const original = seenNow.get(dedupeKey) ?? this.original(dedupeKey, now);
					if (original) return { status: "duplicate", event: original };
				}
				const stored: StoredEvent = { ...event, subscriptionId };
				this.sql.exec(
					"INSERT INTO events (id, row) VALUES (?, ?)",
					stored.id,
					JSON.stringify(usageEventRow(stored)),
				);
				if (dedupeKey !== null) {
					seenNow.set(dedupeKey, stored);
					this.sql.exec(
						"INSERT INTO dedupe (key, event, expires_at) VALUES (?, ?, ?)",
						dedupeKey,
						JSON.stringify(stored),
						now + DEDUPE_TTL_MS,
					);
				}
				deltas.count(stored);
				if (stored.kind === "outcome") this.queueOutcomeCompleted(stored, request.accountId);
				return { status: "processed", event: stored };
			});
			deltas.applyTo(this.sql);
			return { results, refused: [...refused] };
		});
	}

	private original(dedupeKey: string, now: number): StoredEvent | null {
		const row = this.sql
			.exec<{ event: string }>("SELECT event FROM dedupe WHERE key = ? AND expires_at > ?", dedupeKey, now)
			.toArray()[0];
		return row ? (JSON.parse(row.event) as StoredEvent) : null;
	}

	/** outcome.completed, with the data of §13; its id is fixed now so a repeated flush writes it once. */
	private queueOutcomeCompleted(outcome: StoredEvent, accountId: string | null): void {
		const data = {
			outcome_id: outcome.id,
			agent_key: outcome.agentKey,
			outcome_type: outcome.type,
			value: Decimal.from(outcome.value ?? "0").toNumber(),
			subscription_id: outcome.subscriptionId,
			account_id: accountId,
			timestamp: outcome.timestamp,
		};
		this.sql.exec(
			"INSERT INTO outbox (id, event, data) VALUES (?, ?, ?)",
			newId("evt"),
			"outcome.completed",
			JSON.stringify(data),
		);
	}

	usage(startDay: string, endDay: string, agentKey?: string): UsageAggregate[] {
		return readUsage(this.sql, startDay, endDay, agentKey);
	}

	purgeExpiredDedupeKeys(now: number): void {
		this.sql.exec("DELETE FROM dedupe WHERE expires_at <= ?", now);
	}
}

/** The usage_events row of an event, in the JSON shape the flush's INSERT … SELECT reads. */
function usageEventRow(event: StoredEvent) {
	return {
		id: event.id,
		kind: event.kind,
		agent_key: event.agentKey,
		type: event.type,
		value: event.value,
		metadata: event.metadata === null ? null : JSON.stringify(event.metadata),
		timestamp: event.timestamp,
		received_at: event.receivedAt,
		subscription_id: event.subscriptionId,
		idempotency_key: event.idempotencyKey,
	};
}
