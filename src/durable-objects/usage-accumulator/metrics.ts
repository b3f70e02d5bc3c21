/**
 * Per-period quantities of the sources a plan needs beyond the daily aggregates — filtered charges, `max`,
 * `unique_count` (pricing/sources.ts) — counted with the events, in the same transaction, so they are exact across
 * flushes, crashes and late events:
 * - metrics: per billing period, instance and source key, the instance's quantity (count and sum: added; max:
 *   the largest value; unique_count: the distinct values this instance sent first) with version counters like
 *   the daily rows, copied to D1's usage_metrics by the flush;
 * - metric_values: the distinct values of each unique_count source per period, and the instance that sent each
 *   first, so a repeated value is never counted twice.
 * Which sources a period needs comes from the plan in effect for it (plans.ts).
 */
import { Decimal } from "../../lib/decimal";
import { periodOf } from "../../lib/time";
import { statement } from "../../metering/d1-batch";
import {
	contributionOf,
	type MeteredSource,
	type MetricQuantity,
	matchesFilter,
} from "../../pricing/sources";
import type { FlushTarget } from "./flush";
import type { MeteringEvent } from "./types";

export const METRICS_SCHEMA = `
CREATE TABLE IF NOT EXISTS plan_periods (period TEXT PRIMARY KEY, plan TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, source TEXT NOT NULL, quantity TEXT NOT NULL,
	version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (period, agent_key, source));
CREATE INDEX IF NOT EXISTS metrics_unflushed ON metrics (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS metric_values (
	period TEXT NOT NULL, source TEXT NOT NULL, value TEXT NOT NULL, agent_key TEXT NOT NULL,
	PRIMARY KEY (period, source, value));
`;

export type MetricRow = {
	period: string;
	agent_key: string;
	source: string;
	quantity: string;
	version: number;
};

/** Something that sees every newly counted event of a record call and writes with it (store.ts). */
export interface CountObserver {
	count(event: MeteringEvent): void;
	/** Inside the record transaction, after the daily aggregates were written. */
	applyTo(sql: SqlStorage): void;
}

type Delta = { period: string; agentKey: string; source: string; value: Decimal; max: boolean };

const SEPARATOR = "\u0000";

/** What a batch of events adds to the metrics, gathered in memory so each row is written once per batch. */
export class MetricDeltas implements CountObserver {
	private readonly deltas = new Map<string, Delta>();
	private readonly values: [period: string, source: string, value: string, agentKey: string][] = [];

	constructor(private readonly sourcesOf: (period: string) => readonly MeteredSource[]) {}

	get isEmpty(): boolean {
		return this.deltas.size === 0 && this.values.length === 0;
	}

	count(event: MeteringEvent): void {
		const period = periodOf(event.timestamp);
		for (const source of this.sourcesOf(period)) {
			if (!matchesFilter(source, event)) continue;
			const contribution = contributionOf(source, event);
			if (contribution === null) continue;
			if (typeof contribution === "string") {
				this.values.push([period, source.key, contribution, event.agentKey]);
				continue;
			}
			this.add(period, event.agentKey, source.key, contribution, source.aggregate === "max");
		}
	}

	private add(period: string, agentKey: string, source: string, value: Decimal, max: boolean): void {
		const id = `${period}${SEPARATOR}${agentKey}${SEPARATOR}${source}`;
		const delta = this.deltas.get(id);
		if (delta === undefined) this.deltas.set(id, { period, agentKey, source, value, max });
		else delta.value = max ? Decimal.max(delta.value, value) : delta.value.add(value);
	}

	applyTo(sql: SqlStorage): void {
		if (this.values.length > 0) {
			// Only values new to the period come back: each adds one to the count of the instance that sent it.
			const inserted = sql
				.exec<{ period: string; source: string; agent_key: string }>(
					`INSERT OR IGNORE INTO metric_values (period, source, value, agent_key)
					SELECT v.value ->> 0, v.value ->> 1, v.value ->> 2, v.value ->> 3 FROM json_each(?) AS v
					RETURNING period, source, agent_key`,
					JSON.stringify(this.values),
				)
				.toArray();
			for (const row of inserted) this.add(row.period, row.agent_key, row.source, Decimal.ONE, false);
			this.values.length = 0;
		}
		if (this.deltas.size === 0) return;
		const deltas = [...this.deltas.values()];
		this.deltas.clear();
		const current = new Map(
			sql
				.exec<{ i: number; quantity: string }>(
					`SELECT k.key AS i, m.quantity FROM json_each(?) AS k
					JOIN metrics AS m ON m.period = k.value ->> 0 AND m.agent_key = k.value ->> 1 AND m.source = k.value ->> 2`,
					JSON.stringify(deltas.map((d) => [d.period, d.agentKey, d.source])),
				)
				.toArray()
				.map((row) => [row.i, Decimal.from(row.quantity)]),
		);
		const rows = deltas.flatMap((delta, i) => {
			const before = current.get(i);
			let quantity = delta.value;
			if (before !== undefined)
				quantity = delta.max ? Decimal.max(before, delta.value) : before.add(delta.value);
			// A max that did not grow changes nothing: no write, no flush.
			if (before !== undefined && quantity.eq(before)) return [];
			return [[delta.period, delta.agentKey, delta.source, quantity.toString()]];
		});
		if (rows.length === 0) return;
		sql.exec(
			`INSERT INTO metrics (period, agent_key, source, quantity, version)
			SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, 1 FROM json_each(?) AS r WHERE true
			ON CONFLICT (period, agent_key, source) DO UPDATE SET quantity = excluded.quantity, version = version + 1`,
			JSON.stringify(rows),
		);
	}
}

/**
 * Counts a period again from the raw events kept here, for sources learnt after its events were counted. The
 * period's rows are set to 0 first, not deleted, so the flush overwrites in D1 what they held.
 */
export function rebuildPeriod(
	sql: SqlStorage,
	period: string,
	sources: readonly MeteredSource[],
	events: readonly MeteringEvent[],
): void {
	sql.exec("UPDATE metrics SET quantity = '0', version = version + 1 WHERE period = ?", period);
	sql.exec("DELETE FROM metric_values WHERE period = ?", period);
	const deltas = new MetricDeltas((p) => (p === period ? sources : []));
	for (const event of events) deltas.count(event);
	deltas.applyTo(sql);
}

/** The period's quantities per instance (of one instance when `agentKey` is given). */
export function readMetrics(
	sql: SqlStorage,
	period: string,
	agentKey?: string,
): (MetricQuantity & { agentKey: string })[] {
	return sql
		.exec<{ agent_key: string; source: string; quantity: string }>(
			`SELECT agent_key, source, quantity FROM metrics WHERE period = ?
			${agentKey === undefined ? "" : "AND agent_key = ?"}`,
			period,
			...(agentKey === undefined ? [] : [agentKey]),
		)
		.toArray()
		.map((row) => ({ agentKey: row.agent_key, source: row.source, quantity: row.quantity }));
}

// ---- the flush's part (flush.ts calls these) ----------------------------------------------------------------

export function readUnflushedMetrics(sql: SqlStorage, rows: number): MetricRow[] {
	return sql.exec<MetricRow>("SELECT * FROM metrics WHERE version > flushed_version LIMIT ?", rows).toArray();
}

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

export function markMetricsFlushed(sql: SqlStorage, rows: MetricRow[]): void {
	if (rows.length === 0) return;
	sql.exec(
		`UPDATE metrics SET flushed_version = f.value ->> 3
		FROM json_each(?) AS f
		WHERE metrics.period = f.value ->> 0 AND metrics.agent_key = f.value ->> 1 AND metrics.source = f.value ->> 2
			AND metrics.flushed_version < f.value ->> 3`,
		JSON.stringify(rows.map((r) => [r.period, r.agent_key, r.source, r.version])),
	);
}

export const UNFLUSHED_METRICS_SQL = "EXISTS (SELECT 1 FROM metrics WHERE version > flushed_version)";
