/**
 * Margins (docs/reports.md#margins): the P&L broken down by agent, customer or product, and month by month. Revenue is split
 * as the revenue report splits it (docs/reports.md#revenue), costs by the same key — cost records carry their agent, customer and the
 * plan of the subscription they came from; what has none of the key (manual costs without a plan, usage of
 * unassigned instances) is the unattributed row. Every row is a sum of exact parts of the totals, so the rows add
 * up to the totals to the last digit.
 */
import type { CostRecord } from "../costs/costs";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { addPeriods } from "../lib/time";
import { namesOf, type RevenueGrouping, type RevenueLine, revenueTotals, UNATTRIBUTED } from "./revenue";

export interface PnlFigures {
	revenue: Decimal;
	costs: Decimal;
	margin: Decimal;
	margin_percent: Decimal;
}

export interface PnlRow extends PnlFigures {
	id: string | null;
	name: string;
}

export interface PnlPeriodRow extends PnlFigures {
	period: string;
}

const HUNDRED = Decimal.from(100);

/** margin = revenue − costs; margin % = margin / revenue × 100, half-up to 2 decimals, 0 without revenue. */
export function pnlFigures(revenue: Decimal, costs: Decimal): PnlFigures {
	const margin = revenue.sub(costs);
	const margin_percent = revenue.isZero() ? Decimal.ZERO : margin.mul(HUNDRED).divRoundHalfUp(revenue, 2);
	return { revenue, costs, margin, margin_percent };
}

export function pnlJson<T extends PnlFigures>(row: T) {
	return {
		...row,
		revenue: row.revenue.toNumber(),
		costs: row.costs.toNumber(),
		margin: row.margin.toNumber(),
		margin_percent: row.margin_percent.toNumber(),
	};
}

function costKey(record: CostRecord, groupBy: RevenueGrouping): string | null {
	if (groupBy === "agent") return record.agent_id;
	if (groupBy === "customer") return record.customer_id;
	return record.rate_plan_id;
}

/** Revenue and costs per agent, customer or product (null: unattributed). Pure, so properties can test it. */
export function pnlByKey(
	lines: RevenueLine[],
	costRecords: CostRecord[],
	groupBy: RevenueGrouping,
	currency: string,
): Map<string | null, PnlFigures> {
	const revenue = revenueTotals(lines, groupBy, currency);
	const costs = new Map<string | null, Decimal>();
	for (const record of costRecords) {
		const key = costKey(record, groupBy);
		costs.set(key, (costs.get(key) ?? Decimal.ZERO).add(record.amount));
	}
	const rows = new Map<string | null, PnlFigures>();
	for (const key of new Set([...revenue.keys(), ...costs.keys()])) {
		rows.set(key, pnlFigures(revenue.get(key) ?? Decimal.ZERO, costs.get(key) ?? Decimal.ZERO));
	}
	return rows;
}

/** One row per agent, customer or product with revenue or costs in the range; revenue descending. */
export async function pnlBreakdown(
	db: Db,
	scope: Scope,
	lines: RevenueLine[],
	costRecords: CostRecord[],
	groupBy: RevenueGrouping,
	currency: string,
): Promise<PnlRow[]> {
	const rows = pnlByKey(lines, costRecords, groupBy, currency);
	const ids = [...rows.keys()].filter((id): id is string => id !== null);
	const names = await namesOf(db, scope, groupBy, ids);
	return [...rows]
		.map(([id, figures]) => ({ id, name: id === null ? UNATTRIBUTED : (names.get(id) ?? id), ...figures }))
		.sort(
			(a, b) =>
				b.revenue.compare(a.revenue) ||
				a.costs.compare(b.costs) ||
				(a.id === b.id ? 0 : a.id === null ? 1 : b.id === null ? -1 : a.id < b.id ? -1 : 1),
		);
}

/** One row per billing period from `first` to `last`, oldest first, empty months included. */
export function pnlSeries(
	lines: RevenueLine[],
	costRecords: CostRecord[],
	periods: { first: string; last: string } | null,
): PnlPeriodRow[] {
	if (periods === null) return [];
	const revenue = new Map<string, Decimal>();
	for (const line of lines) {
		revenue.set(line.billingPeriod, (revenue.get(line.billingPeriod) ?? Decimal.ZERO).add(line.amount));
	}
	const costs = new Map<string, Decimal>();
	for (const record of costRecords) {
		costs.set(record.period, (costs.get(record.period) ?? Decimal.ZERO).add(record.amount));
	}
	const rows: PnlPeriodRow[] = [];
	for (let period = periods.first; period <= periods.last; period = addPeriods(period, 1)) {
		rows.push({
			period,
			...pnlFigures(revenue.get(period) ?? Decimal.ZERO, costs.get(period) ?? Decimal.ZERO),
		});
	}
	return rows;
}
