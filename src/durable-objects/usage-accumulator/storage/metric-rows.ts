/**
 * The metric tables and their statements (what they hold: parts/metrics.ts): the quantities per period,
 * instance and source, the distinct values of unique_count sources, and the memory of the quantities written
 * here (MetricQuantities) that the alerts read their period from.
 */
import type { MetricQuantity } from "../../../pricing/sources";
import { FEW_ROWS, SEPARATOR } from "./aggregate-rows";
import { StoredValues } from "./stored-values";

export type MetricRow = {
	period: string;
	agent_key: string;
	source: string;
	quantity: string;
	version: number;
};

const upsertMetrics = (rows: string) =>
	`INSERT INTO metrics (period, agent_key, source, quantity, version)
	${rows}
	ON CONFLICT (period, agent_key, source) DO UPDATE SET quantity = excluded.quantity, version = version + 1`;
const UPSERT_METRICS = upsertMetrics(
	"SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, 1 FROM json_each(?) AS r WHERE true",
);
// A single event's few rows by bound values (4 per row), cheaper than json_each; by number of rows, built once.
const UPSERT_FEW_METRICS = Array.from({ length: FEW_ROWS + 1 }, (_, n) =>
	upsertMetrics(`VALUES ${Array.from({ length: n }, () => "(?, ?, ?, ?, 1)").join(", ")}`),
);

/** Rows [period, agent key, source, quantity], absolute values. */
export function writeMetricRows(sql: SqlStorage, rows: readonly string[][]): void {
	if (rows.length <= FEW_ROWS) sql.exec(UPSERT_FEW_METRICS[rows.length] as string, ...rows.flat());
	else sql.exec(UPSERT_METRICS, JSON.stringify(rows));
}

/** The stored quantities of rows by their keys [period, agent key, source], as [position, quantity]. */
export function readMetricQuantities(sql: SqlStorage, keys: readonly unknown[][]): [number, string][] {
	return sql
		.exec<{ i: number; quantity: string }>(
			`SELECT k.key AS i, m.quantity FROM json_each(?) AS k
			JOIN metrics AS m ON m.period = k.value ->> 0 AND m.agent_key = k.value ->> 1 AND m.source = k.value ->> 2`,
			JSON.stringify(keys),
		)
		.toArray()
		.map((row): [number, string] => [row.i, row.quantity]);
}

/** Stores values [period, source, value, agent key] not stored yet; answers those that were new. */
export function insertMetricValues(
	sql: SqlStorage,
	values: readonly [string, string, string, string][],
): { period: string; source: string; agent_key: string }[] {
	return sql
		.exec<{ period: string; source: string; agent_key: string }>(
			`INSERT OR IGNORE INTO metric_values (period, source, value, agent_key)
			SELECT v.value ->> 0, v.value ->> 1, v.value ->> 2, v.value ->> 3 FROM json_each(?) AS v
			RETURNING period, source, agent_key`,
			JSON.stringify(values),
		)
		.toArray();
}

/**
 * A period's rows, its parts' too (keyed by their first instant, which sorts after the period and before its
 * next), set to 0 (not deleted, so the flush overwrites what D1 holds) and its values forgotten.
 */
export function zeroPeriod(sql: SqlStorage, period: string): void {
	const inPeriod = "(period = ?1 OR (period > ?1 AND period < ?1 || '~'))";
	sql.exec(`UPDATE metrics SET quantity = '0', version = version + 1 WHERE ${inPeriod}`, period);
	sql.exec(`DELETE FROM metric_values WHERE ${inPeriod}`, period);
}

// A period is held whole only up to this many rows (instances × sources), and only this many periods at once.
const MAX_WHOLE_ROWS = 2_000;
const MAX_WHOLE_PERIODS = 3;

/**
 * The quantities of the metric rows written here (StoredValues, by period, agent key and source) and, for the
 * periods read whole once, every row of the period: the alerts evaluated with each counting pass read their
 * period from memory instead of a statement per call. It stays what is stored because every write of a metrics
 * row is a MetricDeltas given this object, which notes each row it writes; the writes that are not
 * (rebuildPeriod) and a rolled-back transaction clear it, and so does a full StoredValues.
 */
export class MetricQuantities extends StoredValues {
	// By period, then by agent key and source joined by SEPARATOR.
	private readonly whole = new Map<string, Map<string, string>>();

	override set(id: string, value: string): void {
		super.set(id, value);
		const cut = id.indexOf(SEPARATOR);
		this.whole.get(id.slice(0, cut))?.set(id.slice(cut + 1), value);
	}

	override clear(): void {
		super.clear();
		this.whole.clear();
	}

	/** The period's quantities per instance, as readMetrics answers them. */
	periodRows(sql: SqlStorage, period: string): (MetricQuantity & { agentKey: string })[] {
		const held = this.whole.get(period);
		if (held !== undefined) {
			return [...held].map(([key, quantity]) => {
				const cut = key.indexOf(SEPARATOR);
				return { agentKey: key.slice(0, cut), source: key.slice(cut + 1), quantity };
			});
		}
		const rows = readMetrics(sql, period);
		if (rows.length <= MAX_WHOLE_ROWS) {
			if (this.whole.size >= MAX_WHOLE_PERIODS) this.whole.delete(this.whole.keys().next().value as string);
			this.whole.set(
				period,
				new Map(rows.map((row) => [`${row.agentKey}${SEPARATOR}${row.source}`, row.quantity])),
			);
		}
		return rows;
	}
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

export function readUnflushedMetrics(sql: SqlStorage, rows: number): MetricRow[] {
	return sql.exec<MetricRow>("SELECT * FROM metrics WHERE version > flushed_version LIMIT ?", rows).toArray();
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
