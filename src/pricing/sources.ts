/**
 * Metered sources that the plain daily aggregates (count and sums per kind, type and field) cannot answer: a
 * charge with a metadata filter, or one that takes the `max`, the `unique_count` or the `cost` of its events.
 * The usage accumulators compute these per period for the plan in effect, keyed by `sourceKey`, and the
 * quantity of such a charge is read from them.
 *
 * Quantities per instance combine by adding, except `max`, whose quantity is the largest of the instances'.
 * A `unique_count` value is credited to the first instance that sent it, so the instances' counts add up to the
 * period's distinct count. A `cost` source adds the actions' costs in the plan's currency (`costContribution`).
 */
import { Decimal } from "../lib/decimal";
import { DEFAULT_CURRENCY } from "../lib/money";
import type { Charge, ChargeSource } from "./charges";

/** A metadata value as events carry it (the accumulator's MeteringEvent has the same). */
type MetadataValue = string | number | boolean | null;

/** What a source reads of a counted event: the accumulator's MeteringEvent fits it, without pricing importing it. */
export interface SourceEvent {
	kind: "action" | "outcome";
	type: string;
	value: string | null;
	metadata: Record<string, MetadataValue> | null;
}

export type MetricAggregate = ChargeSource["aggregate"];

/** A source computed by the accumulators, with what an event needs to be checked against it. */
export interface MeteredSource {
	key: string;
	kind: ChargeSource["kind"];
	type: string;
	aggregate: MetricAggregate;
	field: string | null;
	/** Per metadata key, the accepted values as text. */
	filter: [key: string, values: Set<string>][];
	/** The plan's currency: a `cost` source adds only costs in it. */
	currency: string;
}

/** A source's quantity for one instance (or one agent) in one period. */
export interface MetricQuantity {
	source: string;
	/** Exact decimal. */
	quantity: string;
}

export function needsMetering(source: ChargeSource): boolean {
	return (
		source.filter !== undefined ||
		source.aggregate === "max" ||
		source.aggregate === "unique_count" ||
		source.aggregate === "cost"
	);
}

function filterValues(value: string | string[]): string[] {
	return [...new Set(typeof value === "string" ? [value] : value)].sort();
}

/** Canonical: two charges that count the same events the same way share a key, whatever their key order. */
export function sourceKey(source: ChargeSource): string {
	const filter = Object.keys(source.filter ?? {})
		.sort()
		.map((key) => [key, filterValues(source.filter?.[key] as string | string[])]);
	return JSON.stringify([source.kind, source.type, source.aggregate, source.field ?? "", filter]);
}

export function aggregateOfKey(key: string): MetricAggregate {
	return (JSON.parse(key) as [string, string, MetricAggregate])[2];
}

/** The distinct sources of the plan's charges that the accumulators must compute. */
export function meteredSources(
	charges: readonly Charge[],
	currency: string = DEFAULT_CURRENCY,
): MeteredSource[] {
	const sources = new Map<string, MeteredSource>();
	for (const { source } of charges) {
		if (!needsMetering(source)) continue;
		const key = sourceKey(source);
		if (sources.has(key)) continue;
		sources.set(key, {
			key,
			kind: source.kind,
			type: source.type,
			aggregate: source.aggregate,
			field: source.field ?? null,
			filter: Object.entries(source.filter ?? {}).map(([k, v]) => [k, new Set(filterValues(v))]),
			currency,
		});
	}
	return [...sources.values()];
}

/** Metadata text as filters and distinct counts compare it: strings as they are, numbers and booleans as JSON. */
export function metadataText(value: MetadataValue | undefined): string | null {
	if (value === null || value === undefined) return null;
	return typeof value === "string" ? value : String(value);
}

export function matchesFilter(source: MeteredSource, event: SourceEvent): boolean {
	if (event.kind !== source.kind || event.type !== source.type) return false;
	for (const [key, values] of source.filter) {
		const text = metadataText(event.metadata?.[key]);
		if (text === null || !values.has(text)) return false;
	}
	return true;
}

/**
 * What a matching event brings to the source: 1 for count; its number for sum and max (an action's numeric
 * metadata field, an outcome's value; null when it has none); its metadata text for unique_count (null when the
 * field is missing).
 */
export function contributionOf(source: MeteredSource, event: SourceEvent): Decimal | string | null {
	if (source.aggregate === "count") return Decimal.ONE;
	if (source.aggregate === "unique_count") return metadataText(event.metadata?.[source.field ?? ""]);
	// An event's cost needs the environment's model prices: see costContribution.
	if (source.aggregate === "cost") return null;
	if (event.kind === "outcome") return Decimal.from(event.value ?? "0");
	const value = event.metadata?.[source.field ?? ""];
	return typeof value === "number" ? Decimal.from(value) : null;
}

/**
 * What a matching action brings to a `cost` source: its cost (an explicit metadata cost, or its model's price:
 * model-costs/event-cost.ts) when that cost is in the plan's currency; null when it has none or another currency.
 */
export function costContribution(
	source: MeteredSource,
	cost: { amount: Decimal; currency: string } | null,
): Decimal | null {
	if (source.aggregate !== "cost" || cost === null || cost.currency !== source.currency) return null;
	return cost.amount;
}

/** The period's quantity of each source from per-instance (or per-agent) quantities. */
export function combineQuantities(parts: Iterable<MetricQuantity>): Map<string, Decimal> {
	const totals = new Map<string, Decimal>();
	for (const { source, quantity } of parts) {
		const value = Decimal.from(quantity);
		const before = totals.get(source);
		if (before === undefined) totals.set(source, value);
		else
			totals.set(source, aggregateOfKey(source) === "max" ? Decimal.max(before, value) : before.add(value));
	}
	return totals;
}
