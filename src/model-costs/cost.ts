/**
 * What an LLM call cost, and which price applies to it. Both are pure, so ingest, re-rating and the price list
 * share them and they can be property-tested.
 *
 * The cost is exact: (input × input rate + output × output rate + cached × cached rate + reasoning × reasoning
 * rate) / 1,000,000 + the per-request price, in decimal arithmetic with no rounding. Rounding happens only where
 * money is billed (a charge line), so a million fractional-cent calls add up to their exact sum.
 *
 * The price in effect at an instant for (provider, model): the environment's custom price with the latest
 * effective_from at or before the instant, else the catalog's latest such price. Without a provider, the model
 * must have a price in effect under exactly one provider; otherwise the call is unpriced (null). A dated
 * snapshot of a model that has no price of its own takes its model's price (but keeps its own name: event-cost.ts).
 */
import { Decimal } from "../lib/decimal";
import type { ModelPrice } from "./prices";

export interface TokenCounts {
	/** Uncached input tokens. */
	input_tokens?: number;
	output_tokens?: number;
	cached_input_tokens?: number;
	reasoning_tokens?: number;
}

export type PriceRates = Pick<
	ModelPrice,
	| "input_per_million"
	| "output_per_million"
	| "cached_input_per_million"
	| "reasoning_per_million"
	| "per_request"
>;

const ONE_MILLIONTH = Decimal.fromUnits(1n, 6);

function tokens(count: number | undefined): Decimal {
	if (count === undefined || count === 0) return Decimal.ZERO;
	// Whole counts (nearly all) skip reading the number's text.
	return Number.isSafeInteger(count) ? Decimal.from(BigInt(count)) : Decimal.from(count);
}

/** The exact cost of one call at these rates (token counts are finite numbers ≥ 0, fractions allowed). */
export function costOf(price: PriceRates, counts: TokenCounts): Decimal {
	const perMillion = tokens(counts.input_tokens)
		.mul(price.input_per_million)
		.add(tokens(counts.output_tokens).mul(price.output_per_million))
		.add(tokens(counts.cached_input_tokens).mul(price.cached_input_per_million))
		.add(tokens(counts.reasoning_tokens).mul(price.reasoning_per_million));
	return perMillion.mul(ONE_MILLIONTH).add(price.per_request);
}

/** The date a provider appends to a model id to name a snapshot: -2024-08-06 or -20250929. */
const SNAPSHOT_DATE = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** Later effective_from first; for equal ones the later-created (larger id) first. */
function newerFirst(a: ModelPrice, b: ModelPrice): number {
	if (a.effective_from !== b.effective_from) return a.effective_from < b.effective_from ? 1 : -1;
	return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** One (provider, model)'s prices: custom and catalog apart, each newest effective_from first. */
interface PriceHistory {
	provider: string;
	model: string;
	custom: ModelPrice[];
	catalog: ModelPrice[];
}

function inEffect(history: PriceHistory, at: string): ModelPrice | null {
	for (const price of history.custom) if (price.effective_from <= at) return price;
	for (const price of history.catalog) if (price.effective_from <= at) return price;
	return null;
}

/**
 * A list of prices indexed for lookup by model. Instants are ISO 8601 UTC strings with milliseconds (what
 * `Date.toISOString` writes), which compare as text.
 */
export class PriceBook {
	private readonly byModel = new Map<string, PriceHistory[]>();

	constructor(prices: Iterable<ModelPrice>) {
		for (const price of prices) {
			let histories = this.byModel.get(price.model);
			if (!histories) {
				histories = [];
				this.byModel.set(price.model, histories);
			}
			let history = histories.find((h) => h.provider === price.provider);
			if (!history) {
				history = { provider: price.provider, model: price.model, custom: [], catalog: [] };
				histories.push(history);
			}
			history[price.origin].push(price);
		}
		for (const histories of this.byModel.values()) {
			for (const history of histories) {
				history.custom.sort(newerFirst);
				history.catalog.sort(newerFirst);
			}
		}
	}

	/**
	 * The price of `model` (under `provider`, when given) in effect at `at`; null when unpriced. A dated snapshot
	 * that no price names (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`, as providers answer) takes the
	 * price of the model it is a snapshot of.
	 */
	priceAt(at: string, model: string, provider?: string | null): ModelPrice | null {
		const histories = this.byModel.get(model) ?? this.byModel.get(model.replace(SNAPSHOT_DATE, ""));
		if (!histories) return null;
		if (provider !== undefined && provider !== null) {
			const history = histories.find((h) => h.provider === provider);
			return history ? inEffect(history, at) : null;
		}
		let found: ModelPrice | null = null;
		for (const history of histories) {
			const price = inEffect(history, at);
			if (price === null) continue;
			if (found !== null) return null; // the same model under two providers: ambiguous
			found = price;
		}
		return found;
	}

	/** For every (provider, model), the price in effect at `at` (those with none left out). */
	allAt(at: string): ModelPrice[] {
		const out: ModelPrice[] = [];
		for (const histories of this.byModel.values()) {
			for (const history of histories) {
				const price = inEffect(history, at);
				if (price !== null) out.push(price);
			}
		}
		return out;
	}
}

/** The price in effect at `at` for (provider?, model) among `prices`; null when unpriced. */
export function priceInEffect(
	prices: Iterable<ModelPrice>,
	at: string,
	model: string,
	provider?: string | null,
): ModelPrice | null {
	return new PriceBook(prices).priceAt(at, model, provider);
}
