/**
 * What the rest of the Worker may ask of one usage accumulator, bound to its name (handle.ts: usageAccumulator).
 * Callers use this rather than the object's stub: the name is given once, events travel in their wire form
 * (wire.ts), and the answers have their real types. What accumulators ask each other (a handover's release, a
 * shard's report to its head) and what only tests read stay off it.
 */
import type { UsageAggregate } from "../../pricing/quantities";
import type { MetricQuantity } from "../../pricing/sources";
import type { AlertRule } from "./parts/alert-book";
import type { EventView } from "./parts/archive";
import type {
	BudgetView,
	ReleaseAnswer,
	ReservationView,
	ReserveAnswer,
	ReserveRequest,
} from "./parts/reservations";
import type { RawEventQuery } from "./storage/raw-events";
import type { RequestKey } from "./storage/reservation-requests";
import type { AdoptedEvent } from "./storage/set-aside";
import type {
	FlushReport,
	HoldingChange,
	RecordRequest,
	RecordResponse,
	ThresholdAnswer,
	ThresholdRebilled,
	UsageQuery,
} from "./types";

/** A page of the raw events an accumulator keeps, and the instant after which it keeps all it counted. */
export interface RetainedEvents {
	events: EventView[];
	retainedAfter: string;
}

export interface UsageAccumulatorClient {
	readonly name: string;

	/** Counts events (metering/record.ts); see RecordRequest for the claims and RecordResponse for the answer. */
	record(request: Omit<RecordRequest, "name">): Promise<RecordResponse>;
	/** Membership changes of a subscription: from each change's generation on, it holds the instance or not. */
	updateHoldings(accountId: string | null, changes: HoldingChange[]): Promise<void>;

	/** Everything it counted between two UTC days, billable or not: what an instance did. */
	countedUsage(query: UsageQuery): Promise<UsageAggregate[]>;
	/** Billable usage, several ranges in one call, answered in order: what a subscription bills. */
	billableUsage(queries: UsageQuery[]): Promise<UsageAggregate[][]>;
	/** A period's quantities of the plan's filtered, max and unique_count sources. */
	metrics(period: string): Promise<MetricQuantity[]>;
	/** A page of its raw events, newest first, as GET /v1/events shows them. */
	events(query: RawEventQuery): Promise<RetainedEvents>;

	/** In a subscription's head: adds or replaces an alert, evaluated at once. */
	setAlert(accountId: string | null, rule: AlertRule): Promise<void>;
	removeAlert(id: string): Promise<void>;
	/** A plan change "now" split the subscription's period at this instant: its day rows are keyed by it. */
	splitPlan(accountId: string | null, at: string): Promise<void>;
	/** In a subscription's head: sets (null: removes) its invoicing threshold, judged at once. */
	setInvoicingThreshold(accountId: string | null, threshold: string | null): Promise<void>;
	/** In a subscription's head: invoicing's answer to a threshold invoice's request. */
	thresholdInvoiced(accountId: string | null, answer: ThresholdAnswer): Promise<void>;
	/** In a subscription's head: a threshold invoice was voided; what the period's others still bill. */
	thresholdVoided(accountId: string | null, rebilled: ThresholdRebilled): Promise<void>;
	/** In a subscription's head: a rate of its plan's currency to its billing currency was added. */
	exchangeRatesChanged(accountId: string | null): Promise<void>;
	/** The block alerts triggered this period; none means the agent may go on. */
	blockedBy(): Promise<string[]>;
	/** In a subscription's head: blockedBy and the tightest budget with what is spent and held. */
	entitlement(): Promise<{ blockedBy: string[]; budget: BudgetView | null }>;

	/** In a subscription's head: holds the amount when it fits every budget, else says which it exceeds. */
	reserve(accountId: string | null, request: ReserveRequest): Promise<ReserveAnswer>;
	/** In a subscription's head: a reservation as it stands, or null. */
	reservation(id: string): Promise<ReservationView | null>;
	/** In a subscription's head: ends a hold; `request` is the Idempotency-Key that a repeat is answered by. */
	releaseReservation(id: string, request?: RequestKey): Promise<ReleaseAnswer>;

	/** Adoption step 1, on an instance's accumulator: a page of its events set aside for the subscription. */
	setAsideFor(
		adoption: { subscriptionId: string; from: string; generation: number },
		after: string | null,
		limit: number,
	): Promise<AdoptedEvent[]>;
	/** Adoption, on the subscription's accumulator: the last event id of the instance it absorbed. */
	absorbedThrough(agentKey: string): Promise<string | null>;
	/** Adoption step 2, on the subscription's accumulator: counts a page past its mark; answers how many. */
	absorb(
		absorber: { accountId: string | null; billableFrom: string | null; agentKey: string },
		page: AdoptedEvent[],
	): Promise<number>;

	/** Copies what D1 and the archive lack, up to a bound per call (FlushReport.complete). */
	flush(): Promise<FlushReport>;
}
