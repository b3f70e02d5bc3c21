/**
 * The accumulator's own SQLite storage. Every write is synchronous and runs in one transaction per call, so an
 * event, its dedupe key, its aggregates (aggregates.ts) and its outbox row are stored together or not at all.
 *
 * - raw_events: every event counted, in small groups, kept until archived and for 36 days (raw-events.ts).
 * - dedupe_keys: per agent key, idempotency key → the original event, for 36 days (dedupe.ts).
 * - holdings: which instances it holds, at which membership generation (holdings.ts, handover.ts).
 * - daily, costs, model_costs, unpriced: the running aggregates, with version counters (see flush.ts);
 *   daily_unbilled: the day aggregates of events that reached a subscription with a timestamp before its start.
 * - set_aside, absorbed: unbilled usage adopted by a subscription (set-aside.ts, parts/adoption.ts).
 * - outbox: outcome.completed webhook events waiting for the flush.
 *
 * What is counted, and how, is parts/counting.ts; this file owns the tables, the accumulator's identity, and the
 * transaction every write runs in, whose rollback forgets what memory knew of the tables.
 */
import type { UsageAggregate } from "../../../pricing/quantities";
import { type AccumulatorIdentity, parseAccumulatorName } from "../identity";
import type { Handover, HoldingChange } from "../types";
import { type DailyTable, type KnownSums, readUsage } from "./aggregate-rows";
import {
	type DedupeRow,
	dedupePage,
	insertDedupeRows,
	purgeExpiredDedupeRows,
	upgradeDedupeStorage,
} from "./dedupe";
import { Holdings } from "./holdings";
import { MetricQuantities } from "./metric-rows";
import { ModelPriceCache } from "./prices";
import { RecentGroups, upgradeRawEventStorage } from "./raw-events";
import { STORE_SCHEMA } from "./schema";
import { absorbedThrough, purgeSetAside } from "./set-aside";
import { StoredValues } from "./stored-values";

export type StoredIdentity = AccumulatorIdentity & {
	name: string;
	accountId: string | null;
	billableFrom: string | null;
};

/** billableFrom: a subscription's start (docs/billing.md#subscription-lifecycle); its events with earlier timestamps are not billable. */
type Meta = {
	name: string | null;
	accountId: string | null;
	billableFrom: string | null;
	/** The instants its subscription's periods split at (docs/plan-versions.md#changing-now), oldest first. */
	planSplits: string[];
};

/**
 * Statements work on sets, so a call costs a handful of them whatever the number of its events: rows travel as
 * one JSON parameter (json_each), as in the flush to D1. Event groups are the exception (raw-events.ts).
 *
 * The tables are created by the first write. Reading an accumulator that never counted anything (usage by
 * agent_key asks each instance's own one) then stores nothing: no empty database is left behind.
 */
export class AccumulatorStore {
	readonly sql: SqlStorage;
	// What the meta table holds, once read; undefined after a transaction that may have been rolled back.
	private meta: Meta | undefined;
	private hasTables: boolean;
	/**
	 * What was written here of the aggregate rows, per day table (aggregates.ts, KnownSums): the day rows' sums of
	 * that table, and the amounts of the cost rows, which both tables share. Counting need not read them back.
	 */
	readonly sums: Readonly<Record<DailyTable, KnownSums>> = knownSums();
	/**
	 * The quantities of metric rows written here (metrics.ts), for the observers that write them with the events,
	 * and of the periods the alerts read whole.
	 */
	readonly metricQuantities = new MetricQuantities();
	readonly holdings: Holdings;
	/** The raw event groups stored here and not archived yet, for the archive (raw-events.ts). */
	readonly recentGroups = new RecentGroups();
	/** The model prices events are costed with (prices.ts): refreshed by the object before it counts. */
	readonly prices = new ModelPriceCache();
	// Memory kept by others over these tables (the object's alerts), forgotten with the store's own on rollback.
	private readonly alsoForget: { forget(): void }[] = [];

	constructor(readonly storage: DurableObjectStorage) {
		this.sql = storage.sql;
		this.holdings = new Holdings(this.sql);
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
				this.sql.exec(STORE_SCHEMA);
				upgradeDedupeStorage(this.sql, tables);
				upgradeRawEventStorage(this.sql, tables);
			});
		}
	}

	/** Whether anything was ever written here; reads of an accumulator without tables answer "nothing". */
	get isEmpty(): boolean {
		return !this.hasTables;
	}

	/** Creates the tables, with the first write (see the class). */
	ensureTables(): void {
		if (this.hasTables) return;
		this.sql.exec(STORE_SCHEMA);
		this.hasTables = true;
	}

	/** Memory over these tables that a rolled-back transaction must also leave behind (see transaction). */
	forgetOnRollback(cache: { forget(): void }): void {
		this.alsoForget.push(cache);
	}

	/**
	 * A transaction that, if it fails, leaves no cached knowledge of what it may have written: the one place
	 * where a rollback's clean-up is done, for every write of the accumulator.
	 */
	transaction<T>(work: () => T): T {
		try {
			return this.storage.transactionSync(work);
		} catch (error) {
			this.meta = undefined;
			this.forgetSums();
			this.metricQuantities.clear();
			this.holdings.forget();
			this.recentGroups.clear();
			for (const cache of this.alsoForget) cache.forget();
			throw error;
		}
	}

	/**
	 * Forgets what memory knew of the aggregate rows and raw event groups: for a writer that changes them without
	 * the memories of sums (setting events aside).
	 */
	forgetCounted(): void {
		this.forgetSums();
		this.recentGroups.clear();
	}

	private forgetSums(): void {
		for (const { daily, costs, modelCosts } of Object.values(this.sums)) {
			daily.clear();
			costs.clear();
			modelCosts.clear();
		}
	}

	private storedMeta(): Meta {
		if (!this.hasTables) return { name: null, accountId: null, billableFrom: null, planSplits: [] };
		if (this.meta === undefined) {
			const rows = this.sql
				.exec<{ key: string; value: string | null }>("SELECT key, value FROM meta")
				.toArray();
			const meta = new Map(rows.map((r) => [r.key, r.value]));
			this.meta = {
				name: meta.get("name") ?? null,
				accountId: meta.get("account_id") ?? null,
				billableFrom: meta.get("billable_from") ?? null,
				planSplits: JSON.parse(meta.get("plan_splits") ?? "[]") as string[],
			};
		}
		return this.meta;
	}

	/** The instants its subscription's periods split at: day rows are keyed by them (lib/day-keys.ts). */
	get planSplits(): readonly string[] {
		return this.storedMeta().planSplits;
	}

	/** Notes a split instant; call inside the transaction that moves the day rows it changes (plan-splits.ts). */
	notePlanSplit(at: string): void {
		const splits = [...this.planSplits, at].sort();
		this.ensureTables();
		this.meta = undefined;
		this.sql.exec(
			"INSERT OR REPLACE INTO meta (key, value) VALUES ('plan_splits', ?)",
			JSON.stringify(splits),
		);
	}

	/** The stored billable start of a subscription's accumulator (docs/billing.md#subscription-lifecycle). */
	get billableFrom(): string | null {
		return this.storedMeta().billableFrom;
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
		this.ensureTables();
		this.meta = undefined;
		this.sql.exec(
			"INSERT OR REPLACE INTO meta (key, value) VALUES ('name', ?), ('account_id', ?), ('billable_from', ?)",
			name,
			accountId,
			from,
		);
		this.meta = { name, accountId, billableFrom: from, planSplits: stored.planSplits };
	}

	/** Applies membership changes; a change older than the generation known for its key is ignored. */
	applyHoldings(changes: readonly HoldingChange[]): void {
		this.ensureTables();
		this.transaction(() => this.holdings.applyChanges(changes));
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
		this.ensureTables();
		return this.transaction(() => {
			this.holdings.apply([[agentKey, generation, 0]]);
			return dedupePage(this.sql, agentKey, after, limit, now);
		});
	}

	/** Keys handed over by an earlier holder; a key already here keeps its original. */
	storeHandedKeys(rows: DedupeRow[]): void {
		if (rows.length === 0) return;
		this.ensureTables();
		this.transaction(() => insertDedupeRows(this.sql, rows, false));
	}

	/** After every earlier holder handed its keys over: the instance's events are counted from now on. */
	markTakenOver(handover: Handover): void {
		this.ensureTables();
		this.holdings.markTakenOver(handover);
	}

	listHoldings(): HoldingChange[] {
		return this.hasTables ? this.holdings.list() : [];
	}

	/** Usage counted here between two UTC days: billable only, or also what was not billable (docs/billing.md#subscription-lifecycle). */
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

	absorbedThrough(agentKey: string): string | null {
		return this.hasTables ? absorbedThrough(this.sql, agentKey) : null;
	}
}

/** A memory of sums per day table, the cost rows' memory shared by both. */
function knownSums(): Record<DailyTable, KnownSums> {
	const costs = new StoredValues();
	const modelCosts = new StoredValues();
	return {
		daily: { daily: new StoredValues(), costs, modelCosts },
		daily_unbilled: { daily: new StoredValues(), costs, modelCosts },
	};
}
