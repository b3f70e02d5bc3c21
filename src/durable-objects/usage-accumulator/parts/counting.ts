/**
 * Counting a record call's events. In one transaction (storage/store.ts): the placement's claims are applied, events of
 * instances held are stored as raw events with their dedupe keys, and what they add is written — the daily
 * aggregates, the observers' metrics and alerts, outcome.completed outbox rows. A repeated idempotency key
 * (stored, or earlier in the same call) answers the original event instead.
 *
 * Events of an instance that moved here and is not taken over yet wait: the object takes it over from its earlier
 * holders (handover.ts) and counts them in another pass, a few rounds at most.
 *
 * This is the hot path (docs/scaling.md): the loop over events does a map lookup or two per event and builds one
 * array row; everything else is per call.
 */
import { Decimal } from "../../../lib/decimal";
import { newId } from "../../../lib/ids";
import { type AccumulatorIdentity, parseAccumulatorName, subscriptionOf } from "../identity";
import type { DailyTable, KnownSums } from "../storage/aggregate-rows";
import {
	DEDUPE_TTL_MS,
	type DedupeRow,
	dedupeKeyOf,
	dedupeMapKey,
	insertDedupeRows,
	readOriginals,
	storedEventRow,
} from "../storage/dedupe";
import { type ChunkLimits, DEFAULT_CHUNK_LIMITS, type EventRow, eventRow } from "../storage/event-rows";
import type { Holdings } from "../storage/holdings";
import type { ModelPriceCache } from "../storage/prices";
import { insertRawEvents, type RecentGroups } from "../storage/raw-events";
import type { AccumulatorStore } from "../storage/store";
import type {
	EventResult,
	Handover,
	MeteringEvent,
	RecordCall,
	RecordRequest,
	RecordResponse,
	StoredEvent,
} from "../types";
import { decodeEvents } from "../wire";
import { AggregateDeltas } from "./aggregates";
import type { AccumulatorParts } from "./context";
import { observersOf } from "./head";
import type { CountObserver } from "./metrics";
import { notePricesCounted, refreshPrices } from "./rerate";

/** What a counting pass did: the answer, and the instances to take over before their events (`awaiting`) count. */
export interface StoreRecordResult {
	response: RecordResponse;
	handovers: Handover[];
	/** Indices of events left out until their instance is taken over. */
	awaiting: number[];
}

/** What counting writes to besides SQL: the caches of what it wrote (store.ts owns them). */
export interface CountingStorage {
	readonly sql: SqlStorage;
	readonly holdings: Holdings;
	/** What was written here of the aggregate rows, per day table, so counting need not read them back (aggregates.ts). */
	readonly sums: Readonly<Record<DailyTable, KnownSums>>;
	readonly recentGroups: RecentGroups;
	/** The model prices LLM calls are costed with (prices.ts). */
	readonly prices: ModelPriceCache;
	/** The instants the subscription's periods split at, which key their days' rows (plan-splits.ts). */
	readonly planSplits?: readonly string[];
}

/**
 * Counts the events of held instances, in order, in one transaction of the store. The placement's claims are
 * applied first: a claim newer than what this accumulator was told means it holds the key (it missed the
 * announcement). Events of instances still to be taken over are left out (null, their index in `awaiting`).
 */
export function countInStore(
	store: AccumulatorStore,
	request: RecordRequest,
	now: number,
	limits: ChunkLimits = DEFAULT_CHUNK_LIMITS,
	observer?: CountObserver,
): StoreRecordResult {
	const identity = parseAccumulatorName(request.name);
	store.ensureTables();
	return store.transaction(() => {
		store.remember(request.name, request.accountId, request.billableFrom);
		const billableFrom = subscriptionOf(identity) === null ? null : store.billableFrom;
		return countEvents(store, identity, request, billableFrom, now, limits, observer);
	});
}

// Rounds of handover per record call: more means the instance moves again and again while its events arrive.
const MAX_HANDOVER_ROUNDS = 3;
const PROCESSED = "processed" as const;

/** A record call, as the object receives it: plans learnt, counted, instances taken over, flush armed. */
export async function recordCall(parts: AccumulatorParts, call: RecordCall): Promise<RecordResponse> {
	const request: RecordRequest = { ...call, events: decodeEvents(call.events) };
	const identity = parseAccumulatorName(call.name);
	// The environment's model prices, read at most every few seconds (prices.ts), cost the LLM calls.
	await refreshPrices(parts, identity);
	// The plans of the events' periods, once per period: their filtered, max and unique_count sources are
	// counted with the events.
	await parts.plans.learn(identity, timestampsOf(request.events));
	const pass = (part: RecordRequest) => {
		const now = Date.now();
		return countInStore(
			parts.store,
			part,
			now,
			parts.settings.chunk,
			observersOf(parts, identity, request.accountId, now),
		);
	};
	let { response, handovers, awaiting } = pass(request);
	// Only after an instance moved here: its dedupe keys are fetched before its events count.
	for (let round = 0; awaiting.length > 0; round++) {
		if (round === MAX_HANDOVER_ROUNDS) {
			// It keeps moving: the caller re-routes these events from a fresh route.
			for (const index of awaiting) response.refused.push((request.events[index] as MeteringEvent).agentKey);
			response.refused = [...new Set(response.refused)];
			break;
		}
		await Promise.all(handovers.map((handover) => parts.takeOver(request.name, handover)));
		const retried = pass({
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
	notePricesCounted(parts);
	if (response.results.includes(PROCESSED)) await parts.flushSoon();
	return response;
}

/**
 * One counting pass, inside the store's transaction. Events of instances still to be taken over are left out
 * (null, their index in `awaiting`). `billableFrom`: a subscription's start, before which its events are not
 * billable (null for an instance's accumulator).
 */
export function countEvents(
	storage: CountingStorage,
	identity: AccumulatorIdentity,
	request: RecordRequest,
	billableFrom: string | null,
	now: number,
	limits: ChunkLimits,
	observer?: CountObserver,
): StoreRecordResult {
	const subscriptionId = subscriptionOf(identity);
	const events = request.events;
	const agentKeys = [...new Set(events.map((e) => e.agentKey))];
	const { held, handovers } = storage.holdings.claimAndHold(agentKeys, request.claims, identity);
	const waiting = new Set(handovers.map((h) => h.agentKey));
	const originals = originalsOf(storage.sql, events, now);
	const refused = new Set<string>();
	const awaiting: number[] = [];
	const counting = aggregateCounting(storage, billableFrom, observer);
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
	insertRawEvents(storage.sql, newEvents, limits, false, storage.recentGroups);
	insertDedupeRows(storage.sql, newDedupe, true);
	counting.applyTo();
	queueOutcomesCompleted(storage.sql, outcomes, request.accountId);
	return { response: { results, refused: [...refused] }, handovers, awaiting };
}

/**
 * What newly stored events add, applied inside the transaction that stored them: billable events to the daily
 * aggregates and the observers; a subscription's events from before its start (`billableFrom`) apart, in
 * daily_unbilled, since they are not billable (docs/billing.md#subscription-lifecycle).
 */
export function aggregateCounting(
	storage: CountingStorage,
	billableFrom: string | null,
	observer?: CountObserver,
) {
	const billable = new AggregateDeltas("daily", 1, storage.prices, storage.planSplits);
	const unbilled = new AggregateDeltas("daily_unbilled", 1, storage.prices);
	return {
		count: (event: MeteringEvent) => {
			if (billableFrom !== null && event.timestamp < billableFrom) unbilled.count(event);
			else {
				billable.count(event);
				observer?.count(event);
			}
		},
		applyTo: () => {
			billable.applyTo(storage.sql, storage.sums.daily);
			unbilled.applyTo(storage.sql, storage.sums.daily_unbilled);
			observer?.applyTo(storage.sql);
		},
	};
}

/** The stored originals of the events' idempotency keys, by dedupeMapKey. */
function originalsOf(
	sql: SqlStorage,
	events: readonly MeteringEvent[],
	now: number,
): Map<string, StoredEvent> {
	const pairs = events.flatMap((event): [string, string][] => {
		const key = dedupeKeyOf(event);
		return key === null ? [] : [[event.agentKey, key]];
	});
	return readOriginals(sql, pairs, now);
}

/** outcome.completed, with the data of docs/webhooks.md#what-a-delivery-looks-like; ids are fixed now so a repeated flush writes each once. */
function queueOutcomesCompleted(sql: SqlStorage, outcomes: StoredEvent[], accountId: string | null): void {
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
	sql.exec(
		`INSERT INTO outbox (id, event, data)
		SELECT o.value ->> 0, 'outcome.completed', o.value ->> 1 FROM json_each(?) AS o`,
		JSON.stringify(rows),
	);
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

/** The events' timestamps, fewer than one per event when a batch shares a few (the common case). */
export function* timestampsOf(events: readonly MeteringEvent[]): Generator<string> {
	let last = "";
	for (const event of events) {
		const period = event.timestamp.slice(0, 7);
		if (period === last) continue;
		last = period;
		yield event.timestamp;
	}
}
