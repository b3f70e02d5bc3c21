/**
 * The prices an environment's events are costed with: the catalog that ships with the service and the
 * environment's custom prices, read from D1 (docs/model-prices.md). The usage accumulators hold one of these.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { modelPrices } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { PriceBook } from "./cost";
import { catalogPrices, type ModelPrice } from "./prices";

type ModelPriceRow = typeof modelPrices.$inferSelect;

export function fromRow(row: ModelPriceRow): ModelPrice {
	return {
		id: row.id,
		provider: row.provider,
		model: row.model,
		currency: row.currency,
		input_per_million: Decimal.from(row.inputPerMillion),
		output_per_million: Decimal.from(row.outputPerMillion),
		cached_input_per_million: Decimal.from(row.cachedInputPerMillion),
		reasoning_per_million: Decimal.from(row.reasoningPerMillion),
		per_request: Decimal.from(row.perRequest),
		effective_from: row.effectiveFrom,
		origin: "custom",
		created_at: row.createdAt,
	};
}

/** The environment's custom prices, optionally of one model only. */
export async function customPrices(
	db: Db,
	scope: Scope,
	filter: { model?: string } = {},
): Promise<ModelPrice[]> {
	const rows = await db
		.select()
		.from(modelPrices)
		.where(
			inScope(
				scope,
				modelPrices,
				filter.model === undefined ? undefined : eq(modelPrices.model, filter.model),
			),
		);
	return rows.map(fromRow);
}

/** Every price that can apply in this environment: the catalog and its custom prices. */
export async function priceBookFor(db: Db, scope: Scope): Promise<PriceBook> {
	return new PriceBook([...catalogPrices(), ...(await customPrices(db, scope))]);
}
