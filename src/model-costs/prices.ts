/**
 * A model price: what a provider charges for a model's tokens, per million, from an instant on. Prices come from
 * the catalog that ships with the service (the same in every environment, ids included) or are custom to one
 * environment (a negotiated rate, a model the catalog lacks, a change announced for a later date).
 */
import { Decimal } from "../lib/decimal";
import { derivedId } from "../lib/derived-id";
import { CATALOG_ROWS, type CatalogRow } from "./catalog-data";

export type PriceOrigin = "catalog" | "custom";

export interface ModelPrice {
	id: string;
	provider: string;
	model: string;
	currency: string;
	input_per_million: Decimal;
	output_per_million: Decimal;
	cached_input_per_million: Decimal;
	reasoning_per_million: Decimal;
	per_request: Decimal;
	/** ISO 8601 UTC with milliseconds. */
	effective_from: string;
	origin: PriceOrigin;
	created_at: string;
}

/** The rates a price leaves out: cached input at the input price, reasoning at the output price, 0 per request. */
export function withDefaultRates(rates: {
	input_per_million: Decimal;
	output_per_million: Decimal;
	cached_input_per_million?: Decimal;
	reasoning_per_million?: Decimal;
	per_request?: Decimal;
}) {
	return {
		input_per_million: rates.input_per_million,
		output_per_million: rates.output_per_million,
		cached_input_per_million: rates.cached_input_per_million ?? rates.input_per_million,
		reasoning_per_million: rates.reasoning_per_million ?? rates.output_per_million,
		per_request: rates.per_request ?? Decimal.ZERO,
	};
}

/** A catalog row's id: from its provider, model and effective_from, so it is the same wherever it is computed. */
export function catalogPriceId(row: Pick<CatalogRow, "provider" | "model" | "effective_from">): string {
	const from = new Date(row.effective_from);
	return derivedId("mpr", from.getTime(), `catalog|${row.provider}|${row.model}|${from.toISOString()}`);
}

function catalogPrice(row: CatalogRow): ModelPrice {
	const effectiveFrom = new Date(row.effective_from).toISOString();
	const optional = (value: string | undefined) => (value === undefined ? undefined : Decimal.from(value));
	return {
		id: catalogPriceId(row),
		provider: row.provider,
		model: row.model,
		currency: "USD",
		...withDefaultRates({
			input_per_million: Decimal.from(row.input_per_million),
			output_per_million: Decimal.from(row.output_per_million),
			cached_input_per_million: optional(row.cached_input_per_million),
			reasoning_per_million: optional(row.reasoning_per_million),
			per_request: optional(row.per_request),
		}),
		effective_from: effectiveFrom,
		origin: "catalog",
		created_at: effectiveFrom,
	};
}

let catalog: readonly ModelPrice[] | undefined;

/** The catalog's prices, built once per isolate. */
export function catalogPrices(): readonly ModelPrice[] {
	catalog ??= CATALOG_ROWS.map(catalogPrice);
	return catalog;
}

export function modelPriceJson(price: ModelPrice) {
	return {
		id: price.id,
		provider: price.provider,
		model: price.model,
		currency: price.currency,
		input_per_million: price.input_per_million.toNumber(),
		output_per_million: price.output_per_million.toNumber(),
		cached_input_per_million: price.cached_input_per_million.toNumber(),
		reasoning_per_million: price.reasoning_per_million.toNumber(),
		per_request: price.per_request.toNumber(),
		effective_from: price.effective_from,
		origin: price.origin,
		created_at: price.created_at,
	};
}
