/**
 * Per-period quantities of the sources a plan needs beyond the daily aggregates — filtered charges, `max`,
 * `unique_count`, `cost` (pricing/sources.ts) — counted with the events, in the same transaction, so they are exact across
 * flushes, crashes and late events:
 * - metrics: per billing period, instance and source key, the instance's quantity (count and sum: added; max:
 *   the largest value; unique_count: the distinct values this instance sent first) with version counters like
 *   the daily rows, copied to D1's usage_metrics by the flush;
 * - metric_values: the distinct values of each unique_count source per period, and the instance that sent each
 *   first, so a repeated value is never counted twice.
 * Which sources a period needs comes from the plan in effect for it (period-plans.ts). A period split by plan
 * changes "now" keeps its quantities per part as well (PeriodParts).
 */
import { statement } from "../../../db/batch";
import { partKeyOf } from "../../../lib/day-keys";
import { Decimal } from "../../../lib/decimal";
import { periodOf } from "../../../lib/time";
import type { EventCost } from "../../../model-costs/event-cost";
import {
	contributionOf,
	costContribution,
	type MeteredSource,
	matchesFilter,
} from "../../../pricing/sources";
import { SEPARATOR } from "../storage/aggregate-rows";
import {
	insertMetricValues,
	type MetricRow,
	readMetricQuantities,
	writeMetricRows,
	zeroPeriod,
} from "../storage/metric-rows";
import type { ModelPriceCache } from "../storage/prices";
import { type StoredValues, storedBefore } from "../storage/stored-values";
import type { FlushTarget, MeteringEvent } from "../types";

/**
 * A period split by plan changes "now" (plan-splits.ts): its quantities are also kept per part, under the part's
 * key (lib/day-keys.ts: partKeyOf), counted for the sources of every part's plan, so that each part is rated on
 * its own (invoicing/period-parts.ts). The period's own rows stay as they are: the current plan's, on the whole
 * period.
 */
export interface PeriodParts {
	/** The period's first instant: the first part's key. */
	start: string;
	splits: readonly string[];
	sources: readonly MeteredSource[];
}

/** The period a metric row's key belongs to: the key itself, or a part key's period. */
const periodOfKey = (key: string) => key.slice(0, 7);

/** Something that sees every newly counted event of a record call and writes with it (counting.ts). */
export interface CountObserver {
	count(event: MeteringEvent): void;
	/** Inside the record transaction, after the daily aggregates were written. */
	applyTo(sql: SqlStorage): void;
}

// Safe integers (token counts, the common case) are gathered as a plain number while the result stays exact:
// `whole` is their sum, or their largest for max; every other value goes to `exact`.
type Delta = {
	period: string;
	agentKey: string;
	source: string;
	max: boolean;
	whole: number | null;
	exact: Decimal | null;
};

/** What a batch of events adds to the metrics, gathered in memory so each row is written once per batch. */
export class MetricDeltas implements CountObserver {
	// By source, then by period and agent key: a source object hashes by identity, and a batch's events mostly
	// share the period and the instance.
	private readonly deltas = new Map<MeteredSource, Map<string, Delta>>();
	private readonly values: [period: string, source: string, value: string, agentKey: string][] = [];

	/**
	 * `known` holds the quantities of metric rows this object wrote before (StoredValues, by period, agent key and
	 * source): rows found there need no read. `prices` costs the actions of `cost` sources (an explicit metadata
	 * cost, else their model's price); without it they add nothing. `partsOf` gives the parts of a period split by
	 * plan changes "now", whose quantities are kept per part as well.
	 */
	constructor(
		private readonly sourcesOf: (period: string) => readonly MeteredSource[],
		private readonly known?: StoredValues,
		private readonly prices?: ModelPriceCache,
		private readonly partsOf?: (period: string) => PeriodParts | null,
	) {}

	/** The keys an event's quantities are kept under, each with its sources: its period's, and its part's. */
	private keysOf(timestamp: string): [key: string, sources: readonly MeteredSource[]][] {
		const period = periodOf(timestamp);
		const keys: [string, readonly MeteredSource[]][] = [[period, this.sourcesOf(period)]];
		const parts = this.partsOf?.(period) ?? null;
		if (parts !== null) keys.push([partKeyOf(timestamp, parts.start, parts.splits), parts.sources]);
		return keys;
	}

	/** The sources counted under a row's key. */
	private sourcesOfKey(key: string): readonly MeteredSource[] {
		const period = periodOfKey(key);
		return key === period ? this.sourcesOf(period) : (this.partsOf?.(period)?.sources ?? []);
	}

	get isEmpty(): boolean {
		return this.deltas.size === 0 && this.values.length === 0;
	}

	count(event: MeteringEvent): void {
		// The hot path: no array of keys made for an event of a period that did not split.
		const period = periodOf(event.timestamp);
		this.countUnder(period, this.sourcesOf(period), event);
		const parts = this.partsOf?.(period) ?? null;
		if (parts !== null)
			this.countUnder(partKeyOf(event.timestamp, parts.start, parts.splits), parts.sources, event);
	}

	private countUnder(period: string, sources: readonly MeteredSource[], event: MeteringEvent): void {
		for (const source of sources) {
			if (!matchesFilter(source, event)) continue;
			if (source.aggregate === "unique_count") {
				const text = contributionOf(source, event);
				if (typeof text === "string") this.values.push([period, source.key, text, event.agentKey]);
				continue;
			}
			if (source.aggregate === "cost") {
				const cost = this.prices?.costOf(event) ?? null;
				const amount = cost === null || cost.kind === "unpriced" ? null : costContribution(source, cost);
				if (amount !== null) this.add(source, period, event.agentKey, amount);
				continue;
			}
			const value = source.aggregate === "count" ? 1 : numberOf(source, event);
			if (value !== null) this.add(source, period, event.agentKey, value);
		}
	}

	/** What an action's new cost changes in the `cost` sources it matches: the new cost less the old. */
	countCostChange(event: MeteringEvent, before: EventCost | null, after: EventCost | null): void {
		for (const [period, sources] of this.keysOf(event.timestamp)) {
			for (const source of sources) {
				if (source.aggregate !== "cost" || !matchesFilter(source, event)) continue;
				const amount = (cost: EventCost | null) =>
					(cost === null || cost.kind === "unpriced" ? null : costContribution(source, cost)) ?? Decimal.ZERO;
				const change = amount(after).sub(amount(before));
				if (!change.isZero()) this.add(source, period, event.agentKey, change);
			}
		}
	}

	private add(source: MeteredSource, period: string, agentKey: string, value: number | Decimal): void {
		let bySource = this.deltas.get(source);
		if (bySource === undefined) {
			bySource = new Map();
			this.deltas.set(source, bySource);
		}
		const id = `${period}${SEPARATOR}${agentKey}`;
		let delta = bySource.get(id);
		const max = source.aggregate === "max";
		if (delta === undefined) {
			delta = { period, agentKey, source: source.key, max, whole: null, exact: null };
			bySource.set(id, delta);
		}
		if (typeof value === "number" && Number.isSafeInteger(value)) {
			const whole: number =
				delta.whole === null ? value : max ? Math.max(delta.whole, value) : delta.whole + value;
			if (Number.isSafeInteger(whole)) {
				delta.whole = whole;
				return;
			}
		}
		const exact = typeof value === "number" ? Decimal.from(value) : value;
		delta.exact =
			delta.exact === null ? exact : max ? Decimal.max(delta.exact, exact) : delta.exact.add(exact);
	}

	applyTo(sql: SqlStorage): void {
		if (this.values.length > 0) {
			// Only values new to the period come back: each adds one to the count of the instance that sent it.
			const inserted = insertMetricValues(sql, this.values);
			const byKey = new Map(this.sourcesOfValues().map((source) => [source.key, source]));
			for (const row of inserted) {
				const source = byKey.get(row.source);
				if (source !== undefined) this.add(source, row.period, row.agent_key, 1);
			}
			this.values.length = 0;
		}
		if (this.deltas.size === 0) return;
		const deltas = [...this.deltas.values()].flatMap((bySource) => [...bySource.values()]);
		this.deltas.clear();
		const ids = deltas.map((d) => `${d.period}${SEPARATOR}${d.agentKey}${SEPARATOR}${d.source}`);
		const before = storedBefore(ids, this.known, (unknown) =>
			readMetricQuantities(
				sql,
				unknown.map((i) => [deltas[i]?.period, deltas[i]?.agentKey, deltas[i]?.source]),
			),
		);
		const rows: string[][] = [];
		const written: [id: string, quantity: string][] = [];
		for (const [i, delta] of deltas.entries()) {
			const stored = before[i];
			const value = deltaValue(delta);
			let quantity = value;
			if (stored !== undefined) {
				const was = Decimal.from(stored);
				quantity = delta.max ? Decimal.max(was, value) : was.add(value);
				// A max that did not grow changes nothing: no write, no flush.
				if (quantity.eq(was)) continue;
			}
			const text = quantity.toString();
			rows.push([delta.period, delta.agentKey, delta.source, text]);
			written.push([ids[i] as string, text]);
		}
		for (const [id, quantity] of written) this.known?.set(id, quantity);
		if (rows.length === 0) return;
		writeMetricRows(sql, rows);
	}

	/** The unique_count sources of the periods (and parts) whose values this batch gathered. */
	private sourcesOfValues(): MeteredSource[] {
		const keys = new Set(this.values.map(([key]) => key));
		return [...keys].flatMap((key) => this.sourcesOfKey(key).filter((s) => s.aggregate === "unique_count"));
	}
}

/** A sum or max source's number for a matching event: an action's numeric field, an outcome's value. */
function numberOf(source: MeteredSource, event: MeteringEvent): number | Decimal | null {
	if (event.kind === "outcome") return Decimal.from(event.value ?? "0");
	const value = event.metadata?.[source.field ?? ""];
	return typeof value === "number" ? value : null;
}

function deltaValue(delta: Delta): Decimal {
	const whole = delta.whole === null ? null : Decimal.from(BigInt(delta.whole));
	if (whole === null) return delta.exact ?? Decimal.ZERO;
	if (delta.exact === null) return whole;
	return delta.max ? Decimal.max(whole, delta.exact) : whole.add(delta.exact);
}

/**
 * Counts a period again from the raw events kept here, for sources learnt after its events were counted. The
 * period's rows (its parts' too) are set to 0 first, not deleted, so the flush overwrites in D1 what they held;
 * what `known` held of them is forgotten.
 */
export function rebuildPeriod(
	sql: SqlStorage,
	period: string,
	sources: readonly MeteredSource[],
	events: readonly MeteringEvent[],
	known: StoredValues,
	prices?: ModelPriceCache,
	parts: PeriodParts | null = null,
): void {
	known.clear();
	zeroPeriod(sql, period);
	const deltas = new MetricDeltas(
		(p) => (p === period ? sources : []),
		undefined,
		prices,
		(p) => (p === period ? parts : null),
	);
	for (const event of events) deltas.count(event);
	deltas.applyTo(sql);
}

// ---- the flush's part (flush.ts calls it) ----------------------------------------------------------------

/** Absolute values, so a repeated flush changes nothing. */
export function metricStatements(
	d1: D1Database,
	target: FlushTarget,
	rows: MetricRow[],
): D1PreparedStatement[] {
	if (rows.length === 0) return [];
	return [
		statement(
			d1,
			`INSERT INTO usage_metrics (accumulator, environment, subscription_id, agent_key, period, source, quantity)
			SELECT ?1, ?2, ?3, r.value ->> '$.agent_key', r.value ->> '$.period', r.value ->> '$.source',
				r.value ->> '$.quantity'
			FROM json_each(?4) AS r WHERE true
			ON CONFLICT (accumulator, period, agent_key, source)
			DO UPDATE SET quantity = excluded.quantity, subscription_id = excluded.subscription_id`,
			target.name,
			target.environment,
			target.kind === "sub" ? target.id : null,
			JSON.stringify(rows),
		),
	];
}
