/**
 * A usage accumulator: the authority for the events it counted. One exists per subscription and one per instance
 * that is in no active subscription (identity.ts names them). It stores each event with its dedupe key and its
 * running aggregates in its own SQLite storage, in one transaction, before it answers — so "processed" survives a
 * crash — and later, from an alarm, copies its aggregates to D1 in bounded chunks and its raw events to the R2
 * archive (parts/alarm.ts). It keeps raw events until archived and for 36 days (storage/raw-events.ts).
 *
 * It counts only events of instances it holds (storage/holdings.ts). Subscription changes tell it synchronously
 * (updateHoldings), and every event carries the placement's claim of who holds its instance (placement.ts);
 * generations (identity.ts) decide which of the two is newer, so a Worker with a stale placement is refused and
 * refreshes from D1.
 *
 * This file only routes calls, to the parts that do the work (parts/, see README.md), over the storage
 * (storage/). The rest of the Worker calls it through handle.ts (the interface in interface.ts). Its public
 * methods are its RPC methods: their names and arguments stay as they are, since a Worker of the previous version
 * may call an object of this one during a rollout (and the reverse).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { periodOf } from "../../lib/time";
import type { UsageAggregate } from "../../pricing/quantities";
import type { MetricQuantity } from "../../pricing/sources";
import { parseAccumulatorName } from "./identity";
import type { RetainedEvents } from "./interface";
import type { FlushSchedule } from "./parts/alarm";
import type { AlertBook, AlertRule } from "./parts/alert-book";
import type { AccumulatorParts, AccumulatorSettings } from "./parts/context";
import type { HandoverRuns } from "./parts/handover";
import type { PlanBook } from "./parts/period-plans";
import type {
	BudgetView,
	ReleaseAnswer,
	ReservationView,
	ReserveAnswer,
	ReserveRequest,
} from "./parts/reservations";
import type { ShardReport } from "./parts/shards";
import { answerOf, type StepFailure } from "./step-failure";
import type { DedupeRow } from "./storage/dedupe";
import type { RawEventQuery } from "./storage/raw-events";
import type { RequestKey } from "./storage/reservation-requests";
import type { AdoptedEvent } from "./storage/set-aside";
import type { AccumulatorStore } from "./storage/store";
import type {
	FlushReport,
	HoldingChange,
	RecordCall,
	RecordResponse,
	ThresholdAnswer,
	ThresholdRebilled,
	UsageQuery,
} from "./types";

export type { RetainedEvents } from "./interface";
export type { AccumulatorSettings } from "./parts/context";

/** The parts (parts/index.ts): the module loads once per isolate; each instance awaits its own import of it. */
type Parts = typeof import("./parts/index");

declare module "../../env" {
	interface BoundClasses {
		USAGE_ACCUMULATOR: UsageAccumulator;
	}
}

export class UsageAccumulator extends DurableObject<Env> {
	// Set by the constructor's load, which the runtime lets finish before it delivers any call or alarm.
	settings!: AccumulatorSettings;
	private lib!: Parts;
	private store!: AccumulatorStore;
	private plans!: PlanBook;
	private alerts!: AlertBook;
	private flushes!: FlushSchedule;
	private handovers!: HandoverRuns;
	private readonly flushSoon = () => this.flushes.soon(this.parts);
	private readonly takeOver: AccumulatorParts["takeOver"] = (name, handover) =>
		this.handovers.once(this.parts, name, handover);

	/**
	 * The parts are imported here, not at the top of this file: the class is exported at the Worker's startup, and
	 * a new isolate then parses only this routing. blockConcurrencyWhile holds every call and alarm until the
	 * parts are loaded and the object built over its storage, as the constructor did when they were static.
	 */
	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		ctx.blockConcurrencyWhile(async () => {
			// Never a promise another instance began: awaiting it would be I/O across Durable Objects.
			const lib: Parts = await import("./parts/index");
			this.lib = lib;
			this.settings = structuredClone(lib.DEFAULT_ACCUMULATOR_SETTINGS);
			this.store = new lib.AccumulatorStore(ctx.storage);
			this.plans = new lib.PlanBook(this.store, env);
			this.alerts = new lib.AlertBook(ctx.storage.sql);
			this.store.forgetOnRollback(this.alerts);
			this.flushes = new lib.FlushSchedule();
			this.handovers = new lib.HandoverRuns();
		});
	}

	/** The parts' view of this object, read at each call (tests replace its env or plans). */
	private get parts(): AccumulatorParts {
		return {
			env: this.env,
			state: this.ctx,
			store: this.store,
			plans: this.plans,
			alerts: this.alerts,
			settings: this.settings,
			flushSoon: this.flushSoon,
			takeOver: this.takeOver,
		};
	}

	// Counting and holdings.

	record(call: RecordCall): Promise<RecordResponse> {
		return this.lib.recordCall(this.parts, call);
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
					this.takeOver(name, { agentKey: change.agentKey, generation: change.generation }),
				),
			)
		).flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
		if (failed.length > 0) console.error(JSON.stringify({ at: "usage-accumulator.handover", name, failed }));
	}

	/** Releases an instance to a newer holder and hands it a page of the instance's dedupe keys (handover.ts). */
	releaseInstance(agentKey: string, generation: number, after: string | null, limit: number): DedupeRow[] {
		return this.store.release(
			agentKey,
			generation,
			after,
			Math.min(limit, this.lib.HANDOVER_PAGE_SIZE),
			Date.now(),
		);
	}

	holdings(): HoldingChange[] {
		return this.store.listHoldings();
	}

	// Adoption of unbilled usage (adoption.ts).

	/** Step 1, on an instance's accumulator: sets its events since `from` aside and answers a page of them. */
	setAsideFor(
		subscriptionId: string,
		from: string,
		generation: number,
		after: string | null,
		limit: number,
	): Promise<AdoptedEvent[] | StepFailure> {
		return answerOf(() =>
			this.lib.setAsideFor(this.parts, this.flushes, { subscriptionId, from, generation }, after, limit),
		);
	}

	/** The last event id of the instance this subscription's accumulator absorbed. */
	absorbedThrough(agentKey: string): string | null {
		return this.store.absorbedThrough(agentKey);
	}

	/** Step 2, on the subscription's accumulator: counts a page past its mark; answers how many. */
	absorb(
		request: { name: string; accountId: string | null; billableFrom: string | null; agentKey: string },
		page: AdoptedEvent[],
	): Promise<number | StepFailure> {
		return answerOf(() => this.lib.absorbPage(this.parts, request, page));
	}

	// Reads.

	/** Real-time usage between two UTC days (inclusive), optionally of one instance: all it counted, billable or not. */
	usage(startDay: string, endDay: string, agentKey?: string): UsageAggregate[] {
		return this.store.usage(startDay, endDay, agentKey, true);
	}

	/** Several reads of billable usage (what a subscription bills) in one call, answered in order. */
	usageOf(queries: UsageQuery[]): UsageAggregate[][] {
		return queries.map(({ startDay, endDay, agentKey }) => this.store.usage(startDay, endDay, agentKey));
	}

	/** The period's quantities of filtered, max and unique_count sources, per instance (pricing/sources.ts). */
	metricsOf(period: string, agentKey?: string): MetricQuantity[] {
		if (this.store.isEmpty) return [];
		return this.lib.readMetrics(this.store.sql, period, agentKey).map(({ source, quantity }) => ({
			source,
			quantity,
		}));
	}

	/**
	 * A page of the raw events kept here, newest first, as the explorer shows them (GET /v1/events), and the
	 * instant after which every event counted here is kept (older ones may be only in the archive).
	 */
	events(query: RawEventQuery): RetainedEvents {
		const retainedAfter = this.lib.eventsRetainedAfter(this.store.sql, Date.now());
		const identity = this.store.identity();
		if (identity === null) return { events: [], retainedAfter };
		const subscriptionId = identity.kind === "sub" ? identity.id : null;
		const events = this.lib
			.newestRawEvents(this.store.sql, query)
			.map((row) => this.lib.eventViewOf(row, subscriptionId, identity.billableFrom));
		return { events, retainedAfter };
	}

	// Alerts, in a subscription's head (head.ts).

	setAlert(name: string, accountId: string | null, rule: AlertRule): Promise<void> {
		return this.lib.setAlert(this.parts, name, accountId, rule);
	}

	removeAlert(id: string): void {
		this.alerts.remove(id);
	}

	/** The block alerts triggered in the current period; none means the agent may go on. */
	blockedBy(): string[] {
		return this.alerts.blockedBy(periodOf(new Date().toISOString()));
	}

	/** In a subscription's head: the block alerts triggered this period and the tightest budget. */
	async entitlement(name: string): Promise<{ blockedBy: string[]; budget: BudgetView | null }> {
		return { blockedBy: this.blockedBy(), budget: await this.lib.tightestBudget(this.parts, name) };
	}

	// Threshold invoices, in a subscription's head (thresholds.ts).

	setInvoicingThreshold(name: string, accountId: string | null, threshold: string | null): Promise<void> {
		return this.lib.setInvoicingThreshold(this.parts, name, accountId, threshold);
	}

	thresholdInvoiced(name: string, accountId: string | null, answer: ThresholdAnswer): Promise<void> {
		return this.lib.thresholdInvoiced(this.parts, name, accountId, answer);
	}

	thresholdVoided(name: string, accountId: string | null, rebilled: ThresholdRebilled): Promise<void> {
		return this.lib.thresholdVoided(this.parts, name, accountId, rebilled);
	}

	/** A plan change "now" split the subscription's period at `at` (plan-splits.ts). */
	splitPlan(name: string, accountId: string | null, at: string): Promise<void> {
		return this.lib.splitPlan(this.parts, name, accountId, at);
	}

	/** From another shard of the subscription, after its flush: its period so far. */
	reportShard(name: string, accountId: string | null, report: ShardReport): Promise<void> {
		return this.lib.receiveShardReport(this.parts, name, accountId, report);
	}

	/** In a subscription's head: a rate its amounts convert by was added; converts and evaluates again now. */
	exchangeRatesChanged(name: string, accountId: string | null): Promise<void> {
		return this.lib.exchangeRatesChanged(this.parts, name, accountId);
	}

	// Budget reservations, in a subscription's head (reservations.ts).

	reserve(name: string, accountId: string | null, request: ReserveRequest): Promise<ReserveAnswer> {
		return this.lib.reserve(this.parts, name, accountId, request);
	}

	reservation(name: string, id: string): ReservationView | null {
		return this.lib.readReservation(this.parts, name, id);
	}

	releaseReservation(name: string, id: string, request?: RequestKey): ReleaseAnswer {
		return this.lib.releaseReservation(this.parts, name, id, request);
	}

	// D1 and the archive (alarm.ts).

	flush(): Promise<FlushReport> {
		return this.flushes.flush(this.parts);
	}

	/** The environment's custom model prices changed: read them now, re-rate and flush (rerate.ts). */
	async repriceNow(): Promise<void> {
		this.store.prices.expire();
		if (!this.store.isEmpty) await this.flushes.flush(this.parts);
	}

	override alarm(): Promise<void> {
		return this.flushes.alarm(this.parts);
	}
}
