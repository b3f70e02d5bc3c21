/**
 * Adoption of unbilled usage (docs/billing.md#subscription-lifecycle, `adopt_unbilled_usage`): a new subscription takes over what its instances did
 * outside every subscription since its `started_at` — their events, with their aggregates and costs — so that it
 * is billed with the subscription's period, and counted once.
 *
 * Two accumulators take part, and either may fail between their steps, so each step can be repeated:
 * 1. The instance's accumulator sets the events aside for the subscription, in one transaction: it takes them out
 *    of its raw events and its aggregates and keeps them in `set_aside`. The first call fixes the set; a repeat
 *    answers the same events.
 * 2. The subscription's accumulator absorbs them, page by page in the order of their ids, in one transaction per
 *    page: it stores them as its own events and counts them, and remembers the last id absorbed per instance
 *    (`absorbed`). A repeated or concurrent page counts only ids past that mark.
 * The driver (subscriptions/adoption.ts) asks the subscription's mark, then the next page after it, until none is
 * left. An event archived by the instance before it was set aside stays in the archive as it was written
 * (unbilled); the subscription does not archive it again.
 */

import { parseAccumulatorName } from "../identity";
import type { ChunkLimits, EventRow } from "../storage/event-rows";
import type { ModelPriceCache } from "../storage/prices";
import { insertRawEvents, meteringEventOf } from "../storage/raw-events";
import { type AdoptedEvent, markAbsorbed, unabsorbed } from "../storage/set-aside";
import type { AccumulatorStore } from "../storage/store";
import type { MeteringEvent } from "../types";
import { AggregateDeltas } from "./aggregates";
import type { FlushSchedule } from "./alarm";
import type { AccumulatorParts } from "./context";
import { aggregateCounting, timestampsOf } from "./counting";
import { faultsOf } from "./faults";
import { observersOf } from "./head";
import type { CountObserver } from "./metrics";
import { refreshPrices } from "./rerate";

/** Events per page of an adoption: a page is one RPC answer and one transaction in each accumulator. */
export const ADOPTION_PAGE_SIZE = 2000;

const TIMESTAMP = 6;

/** Who absorbs a page: the subscription's accumulator, for the instance `agentKey`. */
export interface Absorber {
	name: string;
	accountId: string | null;
	billableFrom: string | null;
	agentKey: string;
}

/**
 * Step 1 as the object runs it, on the instance's accumulator. It releases the instance at the subscription's
 * membership `generation` first, so no event counted here later can be missed. One at a time with flushes and
 * archiving, so an event is never archived here while it is being set aside.
 */
export async function setAsideFor(
	parts: AccumulatorParts,
	flushes: FlushSchedule,
	adoption: { subscriptionId: string; from: string; generation: number },
	after: string | null,
	limit: number,
): Promise<AdoptedEvent[]> {
	// What is set aside takes away the costs it was counted with: the prices this environment holds now.
	const identity = parts.store.identity();
	if (identity !== null) await refreshPrices(parts, identity);
	const page = await flushes.serialized(async () =>
		setAsideIn(parts.store, adoption, after, Math.min(limit, ADOPTION_PAGE_SIZE), Date.now()),
	);
	faultsOf(parts.state).adoption?.afterSetAside?.();
	// Its aggregates went down: D1's copy follows.
	if (!parts.store.isEmpty) await parts.flushSoon();
	return page;
}

/** Step 2 as the object runs it, on the subscription's accumulator: answers how many events it counted. */
export async function absorbPage(
	parts: AccumulatorParts,
	absorber: Absorber,
	page: AdoptedEvent[],
): Promise<number> {
	const identity = parseAccumulatorName(absorber.name);
	await refreshPrices(parts, identity);
	await parts.plans.learn(
		identity,
		timestampsOf(page.map(({ row }) => ({ timestamp: row[TIMESTAMP] }) as MeteringEvent)),
	);
	faultsOf(parts.state).adoption?.beforeAbsorb?.();
	const now = Date.now();
	const observer = observersOf(parts, identity, absorber.accountId, now);
	const counted = absorbInto(parts.store, absorber, page, parts.settings.chunk, observer);
	if (counted > 0) await parts.flushSoon();
	return counted;
}

/**
 * Step 1, on the instance's accumulator, inside a transaction: the first call for a subscription moves every
 * event timestamped at or after `from` out of the raw events and aggregates (a later call changes nothing).
 * Answers the page after `after` (an event id) of what was set aside for it.
 */
export function setAside(
	sql: SqlStorage,
	subscriptionId: string,
	from: string,
	after: string | null,
	limit: number,
	now: number,
	prices?: ModelPriceCache,
): AdoptedEvent[] {
	const done = sql.exec("SELECT 1 FROM set_aside_for WHERE subscription_id = ?", subscriptionId).toArray();
	if (done.length === 0) {
		const deltas = new AggregateDeltas("daily", -1, prices);
		const taken: [string, string, string, number][] = [];
		const groups = sql
			.exec<{ seq: number; json: string; archived: number }>(
				"SELECT seq, json, archived FROM raw_events WHERE max_ts >= ?",
				from,
			)
			.toArray();
		for (const group of groups) {
			const rows = JSON.parse(group.json) as EventRow[];
			const kept = rows.filter((row) => row[TIMESTAMP] < from);
			if (kept.length === rows.length) continue;
			for (const row of rows) {
				if (row[TIMESTAMP] < from) continue;
				deltas.count(meteringEventOf(row));
				taken.push([subscriptionId, row[0], JSON.stringify(row), group.archived]);
			}
			if (kept.length === 0) sql.exec("DELETE FROM raw_events WHERE seq = ?", group.seq);
			else {
				const stamps = kept.map((row) => row[TIMESTAMP]).sort();
				sql.exec(
					"UPDATE raw_events SET json = ?, size = ?, min_ts = ?, max_ts = ? WHERE seq = ?",
					JSON.stringify(kept),
					kept.length,
					stamps[0],
					stamps.at(-1),
					group.seq,
				);
			}
		}
		for (let start = 0; start < taken.length; start += 500) {
			sql.exec(
				`INSERT INTO set_aside (subscription_id, id, row, archived, at)
				SELECT t.value ->> 0, t.value ->> 1, t.value ->> 2, t.value ->> 3, ?2 FROM json_each(?1) AS t`,
				JSON.stringify(taken.slice(start, start + 500)),
				now,
			);
		}
		deltas.applyTo(sql);
		sql.exec("INSERT INTO set_aside_for (subscription_id, at) VALUES (?, ?)", subscriptionId, now);
	}
	return sql
		.exec<{ row: string; archived: number }>(
			`SELECT row, archived FROM set_aside WHERE subscription_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3`,
			subscriptionId,
			after ?? "",
			limit,
		)
		.toArray()
		.map(({ row, archived }) => ({ row: JSON.parse(row) as EventRow, archived: archived === 1 }));
}

/** Step 1 in the instance's storage, in one transaction: releases the instance and sets the events aside. */
function setAsideIn(
	store: AccumulatorStore,
	adoption: { subscriptionId: string; from: string; generation: number },
	after: string | null,
	limit: number,
	now: number,
): AdoptedEvent[] {
	const identity = store.identity();
	if (identity === null || identity.kind !== "inst") return [];
	return store.transaction(() => {
		store.holdings.apply([[identity.id, adoption.generation, 0]]);
		// Setting aside lowers day and cost rows without the caches of sums, and rewrites raw event groups:
		// what the caches knew of them is stale.
		store.forgetCounted();
		return setAside(store.sql, adoption.subscriptionId, adoption.from, after, limit, now, store.prices);
	});
}

/**
 * Adoption, step 2, on the subscription's accumulator: counts the events of the page past the instance's mark
 * as its own, with its observers, in one transaction. Their outcome.completed were sent when first counted.
 * Answers how many it counted.
 */
export function absorbInto(
	store: AccumulatorStore,
	absorber: Absorber,
	page: readonly AdoptedEvent[],
	limits: ChunkLimits,
	observer?: CountObserver,
): number {
	store.ensureTables();
	return store.transaction(() => {
		store.remember(absorber.name, absorber.accountId, absorber.billableFrom);
		const { fresh, through } = unabsorbed(store.sql, absorber.agentKey, page);
		if (through === null) return 0;
		const counting = aggregateCounting(store, absorber.billableFrom, observer);
		for (const { row } of fresh) counting.count(meteringEventOf(row));
		insertRawEvents(
			store.sql,
			fresh.filter((e) => !e.archived).map((e) => e.row),
			limits,
		);
		insertRawEvents(
			store.sql,
			fresh.filter((e) => e.archived).map((e) => e.row),
			limits,
			true,
		);
		counting.applyTo();
		markAbsorbed(store.sql, absorber.agentKey, through);
		return fresh.length;
	});
}
