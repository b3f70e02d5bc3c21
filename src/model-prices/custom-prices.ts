/**
 * Custom model prices: an environment's own prices, stored in D1, beside the catalog that ships with the
 * service. A custom price may start up to 35 days back (as far as events can be dated) or at any later time;
 * catalog prices cannot be deleted.
 */

import { eq } from "drizzle-orm";
import { created, removed } from "../audit/record";
import { writeAudited } from "../audit/write";
import { abortUnlessChanged, isAbortedByGuard } from "../db/batch";
import type { Db } from "../db/client";
import { modelPrices } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { DomainError, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { DEFAULT_CURRENCY } from "../lib/money";
import { nowIso } from "../lib/time";
import { PriceBook } from "../model-costs/cost";
import { customPrices } from "../model-costs/price-book";
import {
	catalogPrices,
	type ModelPrice,
	modelPriceJson,
	type PriceOrigin,
	withDefaultRates,
} from "../model-costs/prices";

export const MAX_EFFECTIVE_FROM_BACK_MS = 35 * 24 * 60 * 60 * 1000;

export interface CustomPriceInput {
	provider: string;
	model: string;
	currency?: string;
	input_per_million?: number;
	output_per_million?: number;
	cached_input_per_million?: number;
	reasoning_per_million?: number;
	per_request?: number;
	effective_from?: string;
}

const optional = (value: number | undefined) => (value === undefined ? undefined : Decimal.from(value));

export async function createCustomPrice({
	db,
	scope,
	input,
	now = new Date(),
}: {
	db: Db;
	scope: Scope;
	input: CustomPriceInput;
	now?: Date;
}): Promise<ModelPrice> {
	const effectiveFrom = input.effective_from === undefined ? now : new Date(input.effective_from);
	if (effectiveFrom.getTime() < now.getTime() - MAX_EFFECTIVE_FROM_BACK_MS) {
		throw new DomainError("validation_error", "effective_from must not be more than 35 days in the past.", {
			details: [{ path: "effective_from", message: "must not be more than 35 days in the past" }],
		});
	}
	const price: ModelPrice = {
		id: newId("mpr"),
		provider: input.provider,
		model: input.model,
		currency: input.currency ?? DEFAULT_CURRENCY,
		...withDefaultRates({
			input_per_million: Decimal.from(input.input_per_million ?? 0),
			output_per_million: Decimal.from(input.output_per_million ?? 0),
			cached_input_per_million: optional(input.cached_input_per_million),
			reasoning_per_million: optional(input.reasoning_per_million),
			per_request: optional(input.per_request),
		}),
		effective_from: effectiveFrom.toISOString(),
		origin: "custom",
		created_at: nowIso(),
	};
	const insert = db.insert(modelPrices).values({
		id: price.id,
		environment: scope.environment,
		provider: price.provider,
		model: price.model,
		currency: price.currency,
		inputPerMillion: price.input_per_million.toString(),
		outputPerMillion: price.output_per_million.toString(),
		cachedInputPerMillion: price.cached_input_per_million.toString(),
		reasoningPerMillion: price.reasoning_per_million.toString(),
		perRequest: price.per_request.toString(),
		effectiveFrom: price.effective_from,
		createdAt: price.created_at,
	});
	await writeAudited(db, scope, [insert], {
		action: "model_price.created",
		resourceId: price.id,
		changes: created(recordedFields(price)),
	});
	return price;
}

/** Deletes a custom price of this environment; a catalog price is refused (409), anything else is 404. */
export async function deleteCustomPrice({
	db,
	scope,
	id,
}: {
	db: Db;
	scope: Scope;
	id: string;
}): Promise<{ effectiveFrom: string }> {
	const [row] = await db
		.select()
		.from(modelPrices)
		.where(inScope(scope, modelPrices, eq(modelPrices.id, id)));
	if (row !== undefined) {
		try {
			await writeAudited(
				db,
				scope,
				[
					db.delete(modelPrices).where(inScope(scope, modelPrices, eq(modelPrices.id, id))),
					abortUnlessChanged(db.$client),
				],
				{
					action: "model_price.deleted",
					resourceId: id,
					changes: removed({ provider: row.provider, model: row.model, effective_from: row.effectiveFrom }),
				},
			);
			return { effectiveFrom: row.effectiveFrom };
		} catch (error) {
			if (!isAbortedByGuard(error)) throw error;
			throw notFound("model price", id);
		}
	}
	if (catalogPrices().some((price) => price.id === id)) {
		throw new DomainError(
			"conflict",
			`Model price '${id}' belongs to the catalog, which cannot be deleted; add a custom price for the same model to override it.`,
		);
	}
	throw notFound("model price", id);
}

export interface ModelPriceFilter {
	provider?: string;
	model?: string;
	origin?: PriceOrigin;
	/** ISO 8601 instant: only the price in effect then, per (provider, model). */
	at?: string;
}

/** Catalog and custom prices matching the filter, newest first (created_at, then id). */
export async function listModelPrices(db: Db, scope: Scope, filter: ModelPriceFilter): Promise<ModelPrice[]> {
	const custom = filter.origin === "catalog" ? [] : await customPrices(db, scope, { model: filter.model });
	let prices: ModelPrice[] = [...catalogPrices(), ...custom];
	if (filter.at !== undefined) prices = new PriceBook(prices).allAt(new Date(filter.at).toISOString());
	return prices
		.filter(
			(p) =>
				(filter.provider === undefined || p.provider === filter.provider) &&
				(filter.model === undefined || p.model === filter.model) &&
				(filter.origin === undefined || p.origin === filter.origin),
		)
		.sort((a, b) =>
			a.created_at !== b.created_at
				? a.created_at < b.created_at
					? 1
					: -1
				: a.id < b.id
					? 1
					: a.id > b.id
						? -1
						: 0,
		);
}

/** What a custom price's audit record says it was made with: its API fields but its id, origin and creation. */
function recordedFields(price: ModelPrice) {
	const { id: _id, origin: _origin, created_at: _createdAt, ...fields } = modelPriceJson(price);
	return fields;
}
