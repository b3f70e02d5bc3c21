/**
 * The shards of a hot subscription (identity.ts names them) count disjoint sets of instances, so D1 and every read
 * merge them by adding. Alerts need the subscription's total as it grows, so they live in the head (shard 0):
 * after each flush (its alarm, ~1.5 s after an event) every other shard sends the head its current period as it
 * stands — its daily aggregates and per-instance metrics, absolute values — and the head keeps the newest report
 * of each shard and evaluates its alerts on its own aggregates plus the reports. A threshold crossed by events of
 * another shard therefore fires within a flush delay (plus one call), not in the same transaction.
 *
 * Margin alerts need the subscription's costs too: each report carries the shard's costs of the period per
 * currency, kept beside it in shard_costs.
 *
 * Reports are absolute and stamped with the time they were read, so a repeated or late one never counts twice
 * and never replaces a newer one.
 */
import { Decimal } from "../../../lib/decimal";
import type { UsageAggregate } from "../../../pricing/quantities";
import type { MetricQuantity } from "../../../pricing/sources";
import { readUsage } from "../storage/aggregate-rows";
import { readMetrics } from "../storage/metric-rows";
import { SHARD_REPORTS_SCHEMA } from "../storage/schema";

export interface ShardReport {
	shard: number;
	period: string;
	/** When the shard read it (ms): a report older than the one kept is ignored. */
	readAt: number;
	usage: UsageAggregate[];
	/** Per instance, as the metrics table holds them: they combine across shards as across instances. */
	metrics: MetricQuantity[];
	/** The reservations its events settled since its last report (reservations.ts); absent from older shards. */
	settled?: string[];
	/** The period's costs (metadata.cost and model prices) per currency; absent from shards of older versions. */
	costs?: PeriodCost[];
}

export interface PeriodCost {
	currency: string;
	/** Exact decimal. */
	amount: string;
}

/** What a shard sends its head: the period so far. */
export function shardReportOf(sql: SqlStorage, shard: number, period: string, now: number): ShardReport {
	return {
		shard,
		period,
		readAt: now,
		usage: readUsage(sql, `${period}-01`, `${period}-31`),
		metrics: readMetrics(sql, period).map(({ source, quantity }) => ({ source, quantity })),
		costs: costsByCurrency(sql, period),
	};
}

/** The costs this accumulator computed for the period, per currency. */
function costsByCurrency(sql: SqlStorage, period: string): PeriodCost[] {
	const rows = sql
		.exec<{ currency: string; amount: string }>(
			`SELECT currency, amount FROM costs WHERE period = ?1
			UNION ALL SELECT currency, amount FROM model_costs WHERE period = ?1`,
			period,
		)
		.toArray();
	const totals = new Map<string, Decimal>();
	for (const row of rows) {
		totals.set(row.currency, (totals.get(row.currency) ?? Decimal.ZERO).add(Decimal.from(row.amount)));
	}
	return [...totals].map(([currency, amount]) => ({ currency, amount: amount.toString() }));
}

/** In the head: keeps the newest report of each shard. */
export function storeShardReport(sql: SqlStorage, report: ShardReport): void {
	sql.exec(SHARD_REPORTS_SCHEMA);
	sql.exec(
		`INSERT INTO shard_reports (shard, period, read_at, usage, metrics) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (shard, period) DO UPDATE SET read_at = excluded.read_at, usage = excluded.usage,
			metrics = excluded.metrics
		WHERE excluded.read_at > shard_reports.read_at`,
		report.shard,
		report.period,
		report.readAt,
		JSON.stringify(report.usage),
		JSON.stringify(report.metrics),
	);
	if (report.costs === undefined) return;
	sql.exec(
		`INSERT INTO shard_costs (shard, period, read_at, costs) VALUES (?, ?, ?, ?)
		ON CONFLICT (shard, period) DO UPDATE SET read_at = excluded.read_at, costs = excluded.costs
		WHERE excluded.read_at > shard_costs.read_at`,
		report.shard,
		report.period,
		report.readAt,
		JSON.stringify(report.costs),
	);
}

/** In the head: the costs the other shards reported for the period, in one currency. */
export function reportedCosts(sql: SqlStorage, period: string, currency: string): Decimal {
	sql.exec(SHARD_REPORTS_SCHEMA);
	const rows = sql
		.exec<{ costs: string }>("SELECT costs FROM shard_costs WHERE period = ?", period)
		.toArray();
	return Decimal.sum(
		rows.flatMap((row) =>
			(JSON.parse(row.costs) as PeriodCost[])
				.filter((cost) => cost.currency === currency)
				.map((cost) => Decimal.from(cost.amount)),
		),
	);
}

/** In the head: what the other shards reported for the period (nothing for an unsharded subscription). */
export function reportedUsage(
	sql: SqlStorage,
	period: string,
): { usage: UsageAggregate[]; metrics: MetricQuantity[] } {
	sql.exec(SHARD_REPORTS_SCHEMA);
	const rows = sql
		.exec<{ usage: string; metrics: string }>(
			"SELECT usage, metrics FROM shard_reports WHERE period = ?",
			period,
		)
		.toArray();
	return {
		usage: rows.flatMap((row) => JSON.parse(row.usage) as UsageAggregate[]),
		metrics: rows.flatMap((row) => JSON.parse(row.metrics) as MetricQuantity[]),
	};
}
