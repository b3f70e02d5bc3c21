/** What passes between the Worker and a usage accumulator (RPC payloads: plain, serialisable data). */

import type { Environment } from "../../env";
import type { AccumulatorIdentity } from "./identity";

export type EventKind = "action" | "outcome";

export type MetadataValue = string | number | boolean | null;
export type Metadata = Record<string, MetadataValue>;

/** A validated event as the Worker sends it. `id` is used only when the event is new. */
export interface MeteringEvent {
	id: string;
	kind: EventKind;
	agentKey: string;
	/** action_type or outcome_type. */
	type: string;
	/** Outcomes: the value as an exact decimal string. Actions: null. */
	value: string | null;
	metadata: Metadata | null;
	/** ISO 8601 UTC with milliseconds. */
	timestamp: string;
	receivedAt: string;
	/** The client's idempotency key (body field or header), or null. */
	idempotencyKey: string | null;
}

/** An event as the accumulator counted it. */
export interface StoredEvent extends MeteringEvent {
	subscriptionId: string | null;
}

export interface RecordRequest {
	/** The accumulator's own name (see identity.ts); it learns its identity from it. */
	name: string;
	/** The subscription's account, for outcome.completed; null for an instance accumulator. */
	accountId: string | null;
	/** A subscription's started_at (docs/billing.md#subscription-lifecycle): its events with earlier timestamps are not billable. */
	billableFrom?: string | null;
	/**
	 * For each agent key of the events: the membership generation under which the placement believes this
	 * accumulator holds the key (see membershipGeneration). Newer than what the accumulator knows → it holds it.
	 */
	claims: Record<string, number>;
	events: MeteringEvent[];
}

/**
 * A RecordRequest as it travels to the accumulator: the events as JSON text (wire.ts), which both ends produce
 * and read several times faster than the structured clone of as many objects.
 */
export type RecordCall = Omit<RecordRequest, "events"> & { events: string };

/**
 * "processed": counted as sent, with the accumulator's subscription (the caller has the event, so it does not
 * travel back); a duplicate carries the original event; null: the accumulator does not hold the event's
 * instance, and the caller re-routes it.
 */
export type EventResult = "processed" | { status: "duplicate"; event: StoredEvent } | null;

export interface RecordResponse {
	/** One per event, in request order. */
	results: EventResult[];
	/** Agent keys this accumulator refused (it no longer holds them). */
	refused: string[];
}

/** A membership change told to an accumulator: from `generation` on, it holds `agentKey` or not. */
export interface HoldingChange {
	agentKey: string;
	generation: number;
	held: boolean;
}

/** Usage between two UTC days (YYYY-MM-DD, inclusive), optionally of one instance. */
export interface UsageQuery {
	startDay: string;
	endDay: string;
	agentKey?: string;
}

export interface FlushReport {
	/** Raw events archived to R2. */
	events: number;
	aggregates: number;
	costs: number;
	/** Rows of LLM calls costed from model prices or unpriced: their prices may be up to 30 s old. */
	priced: number;
	outbox: number;
	/** D1 batches written. */
	chunks: number;
	/** false when the call stopped at its chunk limit with data left; call again. */
	complete: boolean;
	/** The archive write failed (the alarm retries it); aggregates were flushed all the same. */
	archiveFailed: boolean;
}

/** An instance this accumulator takes over from its earlier holders, at a membership generation (parts/handover.ts). */
export interface Handover {
	agentKey: string;
	generation: number;
}

/** An accumulator as the flush and the archive name it in D1 and R2. */
export interface FlushTarget extends AccumulatorIdentity {
	name: string;
}

/**
 * A threshold invoice the head accumulator asks invoicing for (parts/thresholds.ts), on the invoice queue: the
 * `sequence`-th of the subscription's period. Asked again until answered; invoicing makes it once.
 */
export interface ThresholdRequest {
	kind: "threshold";
	environment: Environment;
	subscriptionId: string;
	period: string;
	sequence: number;
}

/** Invoicing's answer: what the period's threshold invoices billed now, and whether its regular invoice exists. */
export interface ThresholdAnswer {
	period: string;
	sequence: number;
	/** Exact decimal: the usage amount the period's non-void threshold invoices billed. */
	billed: string;
	closed: boolean;
}

/** After a threshold invoice's void: what the period's non-void threshold invoices bill now (exact decimal). */
export interface ThresholdRebilled {
	period: string;
	billed: string;
}
