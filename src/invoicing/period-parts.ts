/**
 * The parts of a billing period split by plan changes "now" (docs/plan-versions.md#changing-now), read for the
 * subscriptions of a loaded group that have any. Each earlier part is a row of subscription_plan_parts; the last
 * one runs from the latest split to the period's end and is rated by the plan in effect for the period (the
 * state's own plan). The usage of the period is divided by the instants its day rows start at: the accumulator
 * keys the events of a split day from the split on by the split's instant (usage-accumulator/parts/day-keys.ts),
 * so every row lies within one part. Filtered, max and unique_count quantities are kept per part too, under the
 * part's first instant (partMetricRows). One more round trip, made only when some subscription of the group split.
 */
import { gt, gte, lt, type SQL, sql } from "drizzle-orm";
import type { SelectedFields, SQLiteColumn } from "drizzle-orm/sqlite-core";
import { instanceOfRow } from "../agents/instances";
import type { PeriodWindow } from "../billing-period/period";
import { type BaseFeeProration, baseFeeProration } from "../billing-period/proration";
import type { Db } from "../db/client";
import {
	agentInstances,
	ratePlans,
	ratePlanVersions,
	type subscriptionPlanParts,
	usageDaily,
	usageMetrics,
} from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { segmentStartOf } from "../lib/day-keys";
import { Decimal } from "../lib/decimal";
import { effectivePlan } from "../pricing/effective-plan";
import { atVersionRow } from "../pricing/pinned-version";
import type { PriceOverride } from "../pricing/price-overrides";
import type { RatePlanRow } from "../pricing/rate-plans";
import type { AgentMetric, AgentUsage, SubscriptionPeriodState } from "./computed";

export interface PeriodPart {
	/** The part's first instant and the next part's (the period's end for the last), ISO 8601. */
	startsAt: string;
	endsAt: string;
	plan: RatePlanRow;
	usage: AgentUsage[];
	metrics: AgentMetric[];
	/** Its seconds of the period while the subscription was active: what its base fee is prorated by. */
	proration: BaseFeeProration;
}

export type PartRow = typeof subscriptionPlanParts.$inferSelect;

const inList = (column: SQLiteColumn, ids: readonly string[]) =>
	sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;

/** Rows of a usage table (daily rollups, metrics) of these subscriptions, each with the agent of its instance. */
export function usageByAgent<F extends SelectedFields>(
	db: Db,
	scope: Scope,
	table: typeof usageDaily | typeof usageMetrics,
	ids: readonly string[],
	fields: F,
	...conditions: SQL[]
) {
	return db
		.select({ subscriptionId: table.subscriptionId, agentId: agentInstances.agentId, ...fields })
		.from(table)
		.leftJoin(agentInstances, instanceOfRow(table))
		.where(inScope(scope, table, inList(table.subscriptionId, ids), ...conditions));
}

/** The period's day rows of these subscriptions, one by one. */
const dailyRows = (db: Db, scope: Scope, window: PeriodWindow, ids: readonly string[]) =>
	usageByAgent(
		db,
		scope,
		usageDaily,
		ids,
		{
			day: usageDaily.day,
			kind: usageDaily.kind,
			type: usageDaily.type,
			field: usageDaily.field,
			count: usageDaily.count,
			sum: usageDaily.sum,
		},
		gte(usageDaily.day, window.firstDay),
		lt(usageDaily.day, window.endDay),
	);

/**
 * The period's quantities of filtered, max and unique_count sources of these subscriptions per part: the
 * accumulator keeps them under the part's first instant (lib/day-keys.ts: partKeyOf), which sorts after the
 * period's own key and before the next period's.
 */
const partMetricRows = (db: Db, scope: Scope, window: PeriodWindow, ids: readonly string[]) =>
	usageByAgent(
		db,
		scope,
		usageMetrics,
		ids,
		{ key: usageMetrics.period, source: usageMetrics.source, quantity: usageMetrics.quantity },
		gt(usageMetrics.period, window.period),
		lt(usageMetrics.period, `${window.period}~`),
	);

type MetricRow = AgentMetric & { key: string };

/**
 * The metrics of each part: every part row given to the part it lies in. A period whose parts have no rows (its
 * accumulators counted before they kept quantities per part) leaves the period's to the last part.
 */
export function dividedMetrics(
	parts: readonly { startsAt: string }[],
	rows: readonly MetricRow[],
	period: readonly AgentMetric[],
): AgentMetric[][] {
	const metrics = parts.map((): AgentMetric[] => []);
	if (rows.length === 0) {
		metrics[parts.length - 1] = [...period];
		return metrics;
	}
	for (const { key, agentId, source, quantity } of rows) {
		metrics[partIndexOf(parts, key)]?.push({ agentId, source, quantity });
	}
	return metrics;
}

/** The parts' plans at their versions, with the negotiated prices they had. */
export async function partPlans(db: Db, scope: Scope, rows: readonly PartRow[]) {
	const planIds = [...new Set(rows.map((row) => row.ratePlanId))];
	const [plans, versions] = await db.batch([
		db
			.select()
			.from(ratePlans)
			.where(inScope(scope, ratePlans, inList(ratePlans.id, planIds))),
		db
			.select()
			.from(ratePlanVersions)
			.where(inScope(scope, ratePlanVersions, inList(ratePlanVersions.ratePlanId, planIds))),
	]);
	return (row: PartRow): RatePlanRow => {
		const plan = plans.find((p) => p.id === row.ratePlanId);
		const version = versions.find(
			(v) => v.ratePlanId === row.ratePlanId && v.version === row.ratePlanVersion,
		);
		if (!plan || !version) throw new Error(`Plan ${row.ratePlanId} v${row.ratePlanVersion} is missing`);
		const overrides = row.priceOverrides ? (JSON.parse(row.priceOverrides) as PriceOverride[]) : null;
		return effectivePlan(atVersionRow(plan, version), overrides);
	};
}

/** The part a day row (or a part's metric row) belongs to: the last whose start is at or before its first instant. */
function partIndexOf(parts: readonly { startsAt: string }[], day: string): number {
	const start = segmentStartOf(day);
	let index = 0;
	for (let i = 1; i < parts.length; i++) if ((parts[i] as { startsAt: string }).startsAt <= start) index = i;
	return index;
}

/** A day row as read: its key (lib/day-keys.ts), the agent of its instance and its aggregate. */
export type DayRow = Omit<AgentUsage, "agentId"> & { day: string; agentId: string | null };

/** The usage of each part: every day row given to the one part it lies in. */
export function dividedUsage(
	parts: readonly { startsAt: string }[],
	rows: readonly DayRow[],
): AgentUsage[][] {
	const usage = parts.map((): AgentUsage[] => []);
	for (const row of rows) {
		usage[partIndexOf(parts, row.day)]?.push({
			agentId: row.agentId ?? null,
			kind: row.kind,
			type: row.type,
			field: row.field,
			count: Number(row.count),
			sum: Decimal.from(row.sum).toString(),
		});
	}
	return usage;
}

export interface SplitInputs {
	db: Db;
	scope: Scope;
	window: PeriodWindow;
	rows: readonly PartRow[];
	/** When each subscription started and ends, for the active seconds of its parts. */
	lifetimes: Map<string, { startedAt: string; endsAt: string | null }>;
}

/** The states with their parts set, for those of them whose period split; the others as they were. */
export async function withPeriodParts(
	states: SubscriptionPeriodState[],
	{ db, scope, window, rows, lifetimes }: SplitInputs,
): Promise<SubscriptionPeriodState[]> {
	if (rows.length === 0) return states;
	const ids = [...new Set(rows.map((row) => row.subscriptionId))];
	const [planOf, daily, metricRows] = await Promise.all([
		partPlans(db, scope, rows),
		dailyRows(db, scope, window, ids),
		partMetricRows(db, scope, window, ids),
	]);
	return states.map((state) => {
		const earlier = rows
			.filter((row) => row.subscriptionId === state.subscriptionId)
			.sort((a, b) => (a.startsAt < b.startsAt ? -1 : 1));
		const lifetime = lifetimes.get(state.subscriptionId);
		if (earlier.length === 0 || !lifetime) return state;
		const last = earlier[earlier.length - 1] as PartRow;
		const bounds = [
			...earlier.map((row) => ({ startsAt: row.startsAt, endsAt: row.endsAt, plan: planOf(row) })),
			{ startsAt: last.endsAt, endsAt: window.end, plan: state.plan },
		];
		const usage = dividedUsage(
			bounds,
			daily.filter((row) => row.subscriptionId === state.subscriptionId),
		);
		const metrics = dividedMetrics(
			bounds,
			metricRows.filter((row) => row.subscriptionId === state.subscriptionId),
			state.metrics ?? [],
		);
		const parts: PeriodPart[] = bounds.map((bound, i) => ({
			...bound,
			usage: usage[i] ?? [],
			metrics: metrics[i] ?? [],
			proration: partProration(window, bound, lifetime),
		}));
		return { ...state, parts };
	});
}

/** The part's seconds of the period while the subscription was active, whatever the plan's prorate says. */
export function partProration(
	window: PeriodWindow,
	part: { startsAt: string; endsAt: string },
	lifetime: { startedAt: string; endsAt: string | null },
): BaseFeeProration {
	const startedAt = part.startsAt > lifetime.startedAt ? part.startsAt : lifetime.startedAt;
	const endsAt = lifetime.endsAt !== null && lifetime.endsAt < part.endsAt ? lifetime.endsAt : part.endsAt;
	const proration = baseFeeProration(true, window, { startedAt, endsAt });
	return proration ?? { activeSeconds: 1, periodSeconds: 1 };
}
