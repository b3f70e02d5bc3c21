/**
 * The bridge from metered aggregates to the quantities of a plan's metrics, shared by invoicing and the usage
 * endpoint so both see the same numbers. Aggregates may arrive split (per instance, per day…): rows with the same
 * kind, type and field are added, and rating only ever sees the sums.
 */
import { Decimal } from "../lib/decimal";
import type { Charge, ChargeSource } from "./charges";
import { combineQuantities, type MetricQuantity, needsMetering, sourceKey } from "./sources";

export interface UsageAggregate {
	kind: "action" | "outcome";
	type: string;
	/** "" for the events themselves; otherwise the numeric metadata field of actions that was summed. */
	field: string;
	count: number;
	/** Exact decimal. For field "": the sum of the values of outcomes, "0" for actions. */
	sum: string;
}

interface Totals {
	count: bigint;
	sum: Decimal;
}

const EVENTS_THEMSELVES = "";

function aggregateKey(kind: string, type: string, field: string): string {
	return JSON.stringify([kind, type, field]);
}

function addUpAggregates(aggregates: Iterable<UsageAggregate>): Map<string, Totals> {
	const totals = new Map<string, Totals>();
	for (const row of aggregates) {
		const key = aggregateKey(row.kind, row.type, row.field);
		const previous = totals.get(key) ?? { count: 0n, sum: Decimal.ZERO };
		totals.set(key, {
			count: previous.count + BigInt(row.count),
			sum: previous.sum.add(Decimal.from(row.sum)),
		});
	}
	return totals;
}

function quantityOfSource(source: ChargeSource, totals: Map<string, Totals>): Decimal {
	if (source.aggregate === "count") {
		const events = totals.get(aggregateKey(source.kind, source.type, EVENTS_THEMSELVES));
		return Decimal.from(events?.count ?? 0n);
	}
	// Outcomes sum their values (the "" row); actions sum the metadata field the charge names.
	const field = source.kind === "outcome" ? EVENTS_THEMSELVES : (source.field ?? EVENTS_THEMSELVES);
	return totals.get(aggregateKey(source.kind, source.type, field))?.sum ?? Decimal.ZERO;
}

/**
 * The quantity of every metric of the plan (0 when nothing was metered), keyed by metric name. Charges with a
 * filter, a max or a unique_count (sources.ts) read the accumulators' per-source quantities, `metrics`.
 */
export function quantitiesForPlan(
	charges: readonly Charge[],
	aggregates: Iterable<UsageAggregate>,
	metrics: Iterable<MetricQuantity> = [],
): Map<string, Decimal> {
	const totals = addUpAggregates(aggregates);
	const metered = combineQuantities(metrics);
	const quantities = new Map<string, Decimal>();
	for (const charge of charges) {
		const quantity = needsMetering(charge.source)
			? (metered.get(sourceKey(charge.source)) ?? Decimal.ZERO)
			: quantityOfSource(charge.source, totals);
		quantities.set(charge.metric, quantity);
	}
	return quantities;
}
