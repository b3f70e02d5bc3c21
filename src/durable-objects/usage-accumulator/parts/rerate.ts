/**
 * Re-rating: when the environment's custom model prices change (a price created or deleted), the LLM calls this
 * accumulator still keeps (raw events, 36 days) from the earliest `effective_from` of the prices that changed on
 * are costed again. Each call's cost at the prices it was counted with is taken away and its cost at the new
 * prices added — cost records, unpriced calls and the plan's `cost` sources alike — so the totals stay exact even
 * where older events of the month are no longer kept.
 *
 * The custom prices an accumulator counted with are kept in its meta table (`custom_prices`), so a restarted
 * object knows what it had; an accumulator that never noted them (new, or of an earlier version) notes them
 * without re-rating.
 */
import { Decimal } from "../../../lib/decimal";
import { type EventCost, eventCost } from "../../../model-costs/event-cost";
import type { ModelPrice } from "../../../model-costs/prices";
import type { AccumulatorIdentity } from "../identity";
import { bookOf } from "../storage/prices";
import { readRawEvents } from "../storage/raw-events";
import { AggregateDeltas } from "./aggregates";
import type { AccumulatorParts } from "./context";
import { MetricDeltas } from "./metrics";

const KEY = "custom_prices";
const RATES = [
	"input_per_million",
	"output_per_million",
	"cached_input_per_million",
	"reasoning_per_million",
	"per_request",
] as const;

/** Custom prices as text, exact and in a fixed order, so two lists compare as strings. */
export function customPricesText(prices: readonly ModelPrice[]): string {
	return JSON.stringify(
		[...prices]
			.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
			.map((price) => ({ ...price, ...Object.fromEntries(RATES.map((r) => [r, price[r].toString()])) })),
	);
}

function parseCustomPrices(text: string): ModelPrice[] {
	return (JSON.parse(text) as Record<string, string>[]).map(
		(price) =>
			({
				...price,
				...Object.fromEntries(RATES.map((r) => [r, Decimal.from(price[r] as string)])),
			}) as unknown as ModelPrice,
	);
}

export function storedCustomPrices(sql: SqlStorage): string | null {
	const rows = sql.exec<{ value: string | null }>("SELECT value FROM meta WHERE key = ?", KEY).toArray();
	return rows[0]?.value ?? null;
}

export function noteCustomPrices(sql: SqlStorage, text: string): void {
	sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", KEY, text);
}

/** The earliest effective_from among the prices in one list and not the other (by id); null when none differ. */
function changedFrom(before: readonly ModelPrice[], after: readonly ModelPrice[]): string | null {
	const ids = (list: readonly ModelPrice[]) => new Set(list.map((p) => p.id));
	const [had, has] = [ids(before), ids(after)];
	const changed = [...before.filter((p) => !has.has(p.id)), ...after.filter((p) => !had.has(p.id))];
	if (changed.length === 0) return null;
	return changed.map((p) => p.effective_from).sort()[0] as string;
}

const same = (a: EventCost | null, b: EventCost | null): boolean => {
	if (a === null || b === null) return a === b;
	if (a.kind === "unpriced" || b.kind === "unpriced") return a.kind === b.kind;
	if (a.kind !== b.kind || a.currency !== b.currency || !a.amount.eq(b.amount)) return false;
	return a.kind !== "priced" || (b.kind === "priced" && a.model === b.model);
};

/**
 * Refreshes the accumulator's model prices (at most every 30 s) and, when its environment's custom prices
 * changed since it last counted, re-rates what it keeps. Call before counting.
 */
export async function refreshPrices(parts: AccumulatorParts, identity: AccumulatorIdentity): Promise<void> {
	let rerated = false;
	await parts.store.prices.refresh(parts.env.DB, identity.environment, Date.now(), (custom) => {
		rerated = applyPrices(parts, custom);
	});
	if (rerated) await parts.flushSoon();
}

/**
 * Synchronous, right where the new prices replace the old: answers whether anything was re-rated. Metrics of
 * periods whose plan is not learnt yet are left: learning a period counts its metrics again from the raw events
 * (period-plans.ts), with these prices.
 */
function applyPrices(parts: AccumulatorParts, custom: ModelPrice[]): boolean {
	const { store } = parts;
	const text = customPricesText(custom);
	store.prices.noted = false;
	// Nothing counted yet: the first counting pass notes the prices (notePricesCounted).
	if (store.isEmpty) return false;
	const stored = storedCustomPrices(store.sql);
	store.prices.noted = true;
	if (stored === text) return false;
	const before = stored === null ? null : parseCustomPrices(stored);
	const from = before === null ? null : changedFrom(before, custom);
	if (before === null || from === null) {
		store.transaction(() => noteCustomPrices(store.sql, text));
		return false;
	}
	const billableFrom = store.identity()?.billableFrom ?? null;
	const [oldBook, newBook] = [bookOf(before), bookOf(custom)];
	store.transaction(() => {
		const minus = new AggregateDeltas("daily", -1);
		const plus = new AggregateDeltas("daily", 1);
		const metrics = new MetricDeltas(
			parts.plans.sourcesOf,
			store.metricQuantities,
			undefined,
			parts.plans.partsOf,
		);
		for (const event of readRawEvents(store.sql, from, "9999-12-31T23:59:59.999Z")) {
			if (event.kind !== "action" || event.metadata === null) continue;
			if (typeof event.metadata.model !== "string" || typeof event.metadata.cost === "number") continue;
			const was = eventCost(event, oldBook);
			const is = eventCost(event, newBook);
			if (same(was, is)) continue;
			if (was !== null) minus.addModelCost(event, was);
			if (is !== null) plus.addModelCost(event, is);
			// A subscription's events from before its start are not billable: costed, but in no metric.
			if (billableFrom === null || event.timestamp >= billableFrom) metrics.countCostChange(event, was, is);
		}
		// Only model_costs and unpriced rows change: the store's amounts of them stay what is stored.
		minus.applyTo(store.sql, store.sums.daily);
		plus.applyTo(store.sql, store.sums.daily);
		metrics.applyTo(store.sql);
		noteCustomPrices(store.sql, text);
	});
	return true;
}

/** After a counting pass of an accumulator that had counted nothing before: notes the prices it counted with. */
export function notePricesCounted(parts: AccumulatorParts): void {
	const { store } = parts;
	if (store.prices.noted || store.isEmpty) return;
	const custom = store.prices.custom;
	if (custom !== null) store.transaction(() => noteCustomPrices(store.sql, customPricesText(custom)));
	store.prices.noted = true;
}
