/**
 * A usage accumulator: the authority for the events it counted. One exists per subscription and one per instance
 * that is in no active subscription (client.ts names them). It stores each event with its dedupe key and its
 * running aggregates in its own SQLite storage, in one transaction, before it answers — so "processed" survives a
 * crash — and later, from an alarm, copies its aggregates to D1 in bounded chunks (flush.ts) and its raw events
 * to the R2 archive (archive.ts). It keeps raw events until archived and for 36 days (raw-events.ts).
 *
 * It counts only events of instances it holds. Subscription changes tell it synchronously (updateHoldings), and
 * every event carries the router's claim of who holds its instance; generations (client.ts) decide which of the
 * two is newer, so a router with a stale cache is refused and refreshes from D1.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { periodOf } from "../../lib/time";
import type { UsageAggregate } from "../../pricing/quantities";
import type { MetricQuantity } from "../../pricing/sources";
import { dispatchOutbox } from "../../webhooks/dispatch";
import { ADOPTION_PAGE_SIZE, type AdoptedEvent } from "./adoption";
import { AlertBook, type AlertContext, type AlertRule } from "./alerts";
import { type ArchiveHooks, archiveEvents, type EventView, eventViewOf } from "./archive";
import { type AccumulatorIdentity, accumulatorName, accumulatorStub, parseAccumulatorName } from "./client";
import type { DedupeRow } from "./dedupe";
import {
	type ChunkLimits,
	chunkStatements,
	DEFAULT_CHUNK_LIMITS,
	hasUnflushed,
	markFlushed,
	readUnflushed,
} from "./flush";
import { HANDOVER_PAGE_SIZE, type Handover, type HandoverHooks, takeOver } from "./handover";
import { type CountObserver, MetricDeltas, readMetrics } from "./metrics";
import { PlanBook } from "./plans";
import {
	eventsRetainedAfter,
	hasUnarchived,
	newestRawEvents,
	purgeRawEvents,
	RAW_EVENTS_MAX_BYTES,
	type RawEventQuery,
} from "./raw-events";
import { type ShardReport, shardReportOf, storeShardReport } from "./shards";
import { AccumulatorStore, type StoreRecordResult } from "./store";
import type {
	FlushReport,
	HoldingChange,
	MeteringEvent,
	RecordCall,
	RecordRequest,
	RecordResponse,
	UsageQuery,
} from "./types";
import { decodeEvents } from "./wire";

/** What an accumulator keeps of a query's events (raw-events.ts: eventsRetainedAfter). */
export interface RetainedEvents {
	events: EventView[];
	retainedAfter: string;
}

// Rounds of handover per record call: more means the instance moves again and again while its events arrive.
const MAX_HANDOVER_ROUNDS = 3;

export interface AccumulatorSettings {
	/** How long after the first unflushed event the alarm copies to D1. */
	flushDelayMs: number;
	/** After a failed flush. */
	retryDelayMs: number;
	chunk: ChunkLimits;
	/** D1 batches per alarm or flush() call; the rest waits for the next one. */
	maxChunksPerCall: number;
	/** Storage above which archived raw events go before their time (raw-events.ts). */
	maxStoredBytes: number;
	/** Alarms purge expired dedupe keys and raw events at most this often (and the first alarm of an instance). */
	purgeEveryMs: number;
}

export const DEFAULT_ACCUMULATOR_SETTINGS: AccumulatorSettings = {
	flushDelayMs: 1_500,
	retryDelayMs: 10_000,
	chunk: DEFAULT_CHUNK_LIMITS,
	maxChunksPerCall: 20,
	maxStoredBytes: RAW_EVENTS_MAX_BYTES,
	purgeEveryMs: 60_000,
};

/** Fault injection for tests, around the steps of an adoption (adoption.ts). */
export interface AdoptionHooks {
	afterSetAside?: () => void;
	beforeAbsorb?: () => void;
}

/** Fault injection for tests: called around each D1 batch of a flush, with the chunk's number in this call. */
export interface FlushHooks {
	beforeBatch?: (chunk: number) => void;
	afterBatch?: (chunk: number) => void;
}

export class UsageAccumulator extends DurableObject<Env> {
	settings: AccumulatorSettings = structuredClone(DEFAULT_ACCUMULATOR_SETTINGS);
	hooks: FlushHooks = {};
	handoverHooks: HandoverHooks = {};
	archiveHooks: ArchiveHooks = {};
	adoptionHooks: AdoptionHooks = {};
	private readonly handovers = new Map<string, Promise<void>>();
	private readonly store: AccumulatorStore;
	private plans: PlanBook;
	private readonly alerts: AlertBook;
	// Flushes run one at a time, so an older absolute value never lands in D1 after a newer one.
	private flushing: Promise<unknown> = Promise.resolve();
	// True once this instance set (or saw) the alarm that will flush what it records; then recording needs no
	// storage round trip to check. The alarm handler clears it, and sets it again only if it re-arms.
	private alarmArmed = false;
	// When this instance's alarm last purged (0: never, so its first alarm does).
	private purgedAt = 0;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.store = new AccumulatorStore(ctx.storage);
		this.plans = new PlanBook(ctx.storage, env, this.store.metricQuantities);
		this.alerts = new AlertBook(ctx.storage.sql);
	}

	async record(call: RecordCall): Promise<RecordResponse> {
		const request: RecordRequest = { ...call, events: decodeEvents(call.events) };
		const identity = parseAccumulatorName(call.name);
		// The plans of the events' periods, once per period: their filtered, max and unique_count sources are
		// counted with the events.
		await this.plans.learn(identity, timestampsOf(request.events));
		let { response, handovers, awaiting } = this.countEvents(identity, request);
		// Only after an instance moved here: its dedupe keys are fetched before its events count.
		for (let round = 0; awaiting.length > 0; round++) {
			if (round === MAX_HANDOVER_ROUNDS) {
				// It keeps moving: the caller re-routes these events from a fresh route.
				for (const index of awaiting)
					response.refused.push((request.events[index] as MeteringEvent).agentKey);
				response.refused = [...new Set(response.refused)];
				break;
			}
			await Promise.all(handovers.map((handover) => this.takeOverOnce(request.name, handover)));
			const retried = this.countEvents(identity, {
				...request,
				events: awaiting.map((index) => request.events[index] as MeteringEvent),
			});
			retried.response.results.forEach((result, i) => {
				response.results[awaiting[i] as number] = result;
			});
			response.refused = [...new Set([...response.refused, ...retried.response.refused])];
			handovers = retried.handovers;
			awaiting = retried.awaiting.map((i) => awaiting[i] as number);
		}
		if (response.results.includes("processed")) await this.scheduleFlush();
		return response;
	}

	/**
	 * One counting pass in one transaction, with fresh observers: the plan's metrics and, for a subscription,
	 * its alerts, evaluated after the counts (alerts.ts). A pass after a handover counts only its own events.
	 */
	private countEvents(identity: AccumulatorIdentity, request: RecordRequest): StoreRecordResult {
		const now = Date.now();
		try {
			return this.store.record(
				request,
				now,
				this.settings.chunk,
				this.observersOf(identity, request.accountId, now),
			);
		} catch (error) {
			this.alerts.forget();
			throw error;
		}
	}

	/**
	 * What counting notifies besides the aggregates: the plan's metrics and, for a subscription, its alerts, which
	 * live in its head shard; other shards report to it after they flush (shards.ts).
	 */
	private observersOf(identity: AccumulatorIdentity, accountId: string | null, now: number): CountObserver {
		const observers: CountObserver[] = [new MetricDeltas(this.plans.sourcesOf, this.store.metricQuantities)];
		if (isHead(identity)) {
			observers.push(this.alerts.observer(this.alertContext(identity, accountId), now));
		}
		return allOf(observers);
	}

	private alertContext(identity: AccumulatorIdentity, accountId: string | null): AlertContext {
		return {
			subscriptionId: identity.id,
			accountId,
			sharded: identity.shard !== null,
			planOf: (period) => this.plans.planOf(period),
		};
	}

	/**
	 * Adoption step 1 (adoption.ts), on an instance's accumulator: sets its events since `from` aside for the
	 * subscription (the first call) and answers a page of them. It releases the instance at the subscription's
	 * membership `generation` first, so no event counted here later can be missed. One at a time with flushes
	 * and archiving, so an event is never archived here while it is being set aside.
	 */
	async setAsideFor(
		subscriptionId: string,
		from: string,
		generation: number,
		after: string | null,
		limit: number,
	): Promise<AdoptedEvent[]> {
		const page = await this.serialized(async () =>
			this.store.setAside(
				{ subscriptionId, from, generation },
				after,
				Math.min(limit, ADOPTION_PAGE_SIZE),
				Date.now(),
			),
		);
		this.adoptionHooks.afterSetAside?.();
		// Its aggregates went down: D1's copy follows.
		if (!this.store.isEmpty) await this.scheduleFlush();
		return page;
	}

	/** Adoption: the last event id of the instance this subscription's accumulator absorbed. */
	absorbedThrough(agentKey: string): string | null {
		return this.store.absorbedThrough(agentKey);
	}

	/** Adoption step 2, on the subscription's accumulator: counts a page past its mark; answers how many. */
	async absorb(
		request: { name: string; accountId: string | null; billableFrom: string | null; agentKey: string },
		page: AdoptedEvent[],
	): Promise<number> {
		const identity = parseAccumulatorName(request.name);
		await this.plans.learn(
			identity,
			timestampsOf(page.map(({ row }) => ({ timestamp: row[6] }) as MeteringEvent)),
		);
		this.adoptionHooks.beforeAbsorb?.();
		const now = Date.now();
		let counted: number;
		try {
			counted = this.store.absorb(
				request,
				page,
				this.settings.chunk,
				this.observersOf(identity, request.accountId, now),
			);
		} catch (error) {
			this.alerts.forget();
			throw error;
		}
		if (counted > 0) await this.scheduleFlush();
		return counted;
	}

	async updateHoldings(name: string, accountId: string | null, changes: HoldingChange[]): Promise<void> {
		parseAccumulatorName(name);
		this.store.remember(name, accountId);
		this.store.applyHoldings(changes);
		// The new holder fetches the instance's dedupe keys now, so its first event need not wait. If that fails,
		// the first event does it.
		const taken = changes.filter((change) => change.held && change.generation > 0);
		const failed = (
			await Promise.allSettled(
				taken.map((change) =>
					this.takeOverOnce(name, { agentKey: change.agentKey, generation: change.generation }),
				),
			)
		).flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
		if (failed.length > 0) console.error(JSON.stringify({ at: "usage-accumulator.handover", name, failed }));
	}

	/** Releases an instance to a newer holder and hands it a page of the instance's dedupe keys (handover.ts). */
	releaseInstance(agentKey: string, generation: number, after: string | null, limit: number): DedupeRow[] {
		return this.store.release(agentKey, generation, after, Math.min(limit, HANDOVER_PAGE_SIZE), Date.now());
	}

	/** One handover at a time per instance and generation; concurrent calls wait for the same one. */
	private takeOverOnce(name: string, handover: Handover): Promise<void> {
		const key = `${handover.agentKey}\u0000${handover.generation}`;
		let running = this.handovers.get(key);
		if (running === undefined) {
			running = takeOver(
				this.env,
				{ ...parseAccumulatorName(name), name },
				this.store,
				handover,
				this.handoverHooks,
			).finally(() => this.handovers.delete(key));
			this.handovers.set(key, running);
		}
		return running;
	}

	holdings(): HoldingChange[] {
		return this.store.holdings();
	}

	/**
	 * Real-time usage between two UTC days (YYYY-MM-DD, inclusive), optionally of one instance: all it counted,
	 * billable or not (what an instance did).
	 */
	usage(startDay: string, endDay: string, agentKey?: string): UsageAggregate[] {
		return this.store.usage(startDay, endDay, agentKey, true);
	}

	/**
	 * A page of the raw events kept here, newest first, as the explorer shows them (GET /v1/events), and the
	 * instant after which every event counted here is kept (older ones may be only in the archive).
	 */
	events(query: RawEventQuery): RetainedEvents {
		const retainedAfter = eventsRetainedAfter(this.store.sql, Date.now());
		const identity = this.store.identity();
		if (identity === null) return { events: [], retainedAfter };
		const subscriptionId = identity.kind === "sub" ? identity.id : null;
		const events = newestRawEvents(this.store.sql, query).map((row) =>
			eventViewOf(row, subscriptionId, identity.billableFrom),
		);
		return { events, retainedAfter };
	}

	/** Several reads of billable usage (what a subscription bills) in one call, answered in order. */
	usageOf(queries: UsageQuery[]): UsageAggregate[][] {
		return queries.map(({ startDay, endDay, agentKey }) => this.store.usage(startDay, endDay, agentKey));
	}

	/**
	 * Adds or replaces an alert of this subscription's accumulator, and evaluates it at once: a threshold the
	 * period has already reached triggers now, not at the next event.
	 */
	async setAlert(name: string, accountId: string | null, rule: AlertRule): Promise<void> {
		const identity = parseAccumulatorName(name);
		if (!isHead(identity)) throw new Error(`Alerts belong to a subscription's head accumulator, not ${name}`);
		const now = new Date().toISOString();
		await this.plans.learn(identity, [now]);
		this.store.remember(name, accountId);
		try {
			this.ctx.storage.transactionSync(() => {
				this.alerts.set(rule);
				this.alerts.evaluate(this.store.sql, this.alertContext(identity, accountId), periodOf(now));
			});
		} catch (error) {
			this.alerts.forget();
			throw error;
		}
		await this.scheduleFlush();
	}

	/**
	 * In a sharded subscription's head: another shard's period so far (shards.ts). The alerts are evaluated on it
	 * at once, and what they trigger is flushed like any trigger.
	 */
	async reportShard(name: string, accountId: string | null, report: ShardReport): Promise<void> {
		const identity = parseAccumulatorName(name);
		if (identity.shard !== 0) throw new Error(`Shards report to their head (shard 0), not ${name}`);
		const now = new Date().toISOString();
		await this.plans.learn(identity, [now]);
		this.store.remember(name, accountId);
		try {
			this.ctx.storage.transactionSync(() => {
				storeShardReport(this.store.sql, report);
				if (report.period !== periodOf(now)) return;
				this.alerts.evaluate(this.store.sql, this.alertContext(identity, accountId), report.period);
			});
		} catch (error) {
			this.alerts.forget();
			throw error;
		}
		if (!this.store.isEmpty && hasUnflushed(this.store.sql)) await this.scheduleFlush();
	}

	/** A shard other than the head sends it its current period after each flush. */
	private async reportToHead(): Promise<void> {
		const identity = this.store.identity();
		if (identity === null || identity.shard === null || identity.shard === 0) return;
		const now = Date.now();
		const report = shardReportOf(this.store.sql, identity.shard, periodOf(new Date(now).toISOString()), now);
		const head = accumulatorName(identity.environment, { subscriptionId: identity.id, shard: 0 });
		await accumulatorStub(this.env, head).reportShard(head, identity.accountId, report);
	}

	removeAlert(id: string): void {
		this.alerts.remove(id);
	}

	/** The block alerts triggered in the current period; none means the agent may go on. */
	blockedBy(): string[] {
		return this.alerts.blockedBy(periodOf(new Date().toISOString()));
	}

	/** The period's quantities of filtered, max and unique_count sources, per instance (pricing/sources.ts). */
	metricsOf(period: string, agentKey?: string): MetricQuantity[] {
		if (this.store.isEmpty) return [];
		return readMetrics(this.store.sql, period, agentKey).map(({ source, quantity }) => ({
			source,
			quantity,
		}));
	}

	/**
	 * Copies every aggregate not yet in D1 (up to the chunk limit of one call, see FlushReport.complete), then
	 * archives the raw events not yet in R2. A failed archive is reported, not raised: invoicing, which flushes
	 * before rating, needs D1 only; the alarm retries the archive.
	 */
	async flush(): Promise<FlushReport> {
		return await this.serialized(async () => {
			const report = await this.flushChunks();
			const archived = await this.archive();
			report.events = archived.events;
			report.archiveFailed = archived.failed;
			report.complete = report.complete && (archived.complete || archived.failed);
			return report;
		});
	}

	override async alarm(): Promise<void> {
		this.alarmArmed = false;
		let failed = false;
		try {
			failed = (await this.flush()).archiveFailed;
			await this.reportToHead();
		} catch (error) {
			console.error(JSON.stringify({ at: "usage-accumulator.alarm", error: String(error) }));
			failed = true;
		}
		const now = Date.now();
		// Expiry is in days: purging at most every PURGE_EVERY_MS keeps the alarms of a busy accumulator (one
		// every flushDelayMs) from scanning for what is never due yet.
		if (now - this.purgedAt >= this.settings.purgeEveryMs) {
			this.purgedAt = now;
			this.store.purgeExpiredDedupeKeys(now);
			purgeRawEvents(this.ctx.storage, now, this.settings.maxStoredBytes);
		}
		// A call recorded during the flush may have taken this running alarm for a pending one.
		this.alarmArmed = false;
		if (failed) await this.arm(this.settings.retryDelayMs);
		else if (!this.store.isEmpty && (hasUnflushed(this.store.sql) || hasUnarchived(this.store.sql))) {
			await this.arm(this.settings.flushDelayMs);
		}
	}

	private async archive(): Promise<{ events: number; complete: boolean; failed: boolean }> {
		const target = this.store.identity();
		if (target === null) return { events: 0, complete: true, failed: false };
		try {
			const report = await archiveEvents(
				this.env.EVENTS_ARCHIVE,
				this.store.sql,
				target,
				target.billableFrom,
				this.archiveHooks,
				this.store.recentGroups,
			);
			return { events: report.events, complete: report.complete, failed: false };
		} catch (error) {
			console.error(JSON.stringify({ at: "usage-accumulator.archive", error: String(error) }));
			return { events: 0, complete: false, failed: true };
		}
	}

	private async scheduleFlush(): Promise<void> {
		if (this.alarmArmed) return;
		if ((await this.ctx.storage.getAlarm()) === null) await this.arm(this.settings.flushDelayMs);
		else this.alarmArmed = true;
	}

	private async arm(delayMs: number): Promise<void> {
		this.alarmArmed = false;
		await this.ctx.storage.setAlarm(Date.now() + delayMs);
		this.alarmArmed = true;
	}

	private serialized<T>(work: () => Promise<T>): Promise<T> {
		const run = this.flushing.then(work);
		this.flushing = run.catch(() => undefined);
		return run;
	}

	private async flushChunks(): Promise<FlushReport> {
		const report: FlushReport = {
			events: 0,
			aggregates: 0,
			costs: 0,
			outbox: 0,
			chunks: 0,
			complete: true,
			archiveFailed: false,
		};
		const target = this.store.identity();
		// Invoicing asks every accumulator of a period to flush before rating: most have nothing to write.
		if (target === null || !hasUnflushed(this.store.sql)) return report;
		try {
			for (;;) {
				const chunk = readUnflushed(this.store.sql, this.settings.chunk);
				const statements = chunkStatements(this.env.DB, target, chunk);
				if (statements.length === 0) break;
				if (report.chunks === this.settings.maxChunksPerCall) {
					report.complete = false;
					break;
				}
				report.chunks++;
				this.hooks.beforeBatch?.(report.chunks);
				await this.env.DB.batch(statements);
				this.hooks.afterBatch?.(report.chunks);
				markFlushed(this.store.storage, chunk);
				report.aggregates += chunk.daily.length + chunk.unbilledDaily.length;
				report.costs += chunk.costs.length;
				report.outbox += chunk.outbox.length;
			}
		} finally {
			// Outbox rows already in D1 are delivered even when a later chunk failed.
			if (report.outbox > 0) await dispatchOutbox(this.env);
		}
		return report;
	}
}

/** The events' timestamps, fewer than one per event when a batch shares a few (the common case). */
function* timestampsOf(events: readonly MeteringEvent[]): Generator<string> {
	let last = "";
	for (const event of events) {
		const period = event.timestamp.slice(0, 7);
		if (period === last) continue;
		last = period;
		yield event.timestamp;
	}
}

/** A subscription's accumulator that holds its alerts: its only one, or shard 0. */
function isHead(identity: AccumulatorIdentity): boolean {
	return identity.kind === "sub" && (identity.shard === null || identity.shard === 0);
}

function allOf(observers: CountObserver[]): CountObserver {
	return {
		count: (event) => {
			for (const observer of observers) observer.count(event);
		},
		applyTo: (sql) => {
			for (const observer of observers) observer.applyTo(sql);
		},
	};
}
