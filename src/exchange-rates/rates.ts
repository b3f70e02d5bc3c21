/**
 * Exchange rates: 1 `base` = `rate` `quote` from `effective_at` on, per environment. A rate is exact decimal text,
 * answered as created; the rate in effect at an instant is the pair's with the latest `effective_at` at or before it.
 */
import { and, count, desc, eq, lte, type SQL } from "drizzle-orm";
import { created } from "../audit/record";
import { writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { exchangeRates } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export interface ExchangeRate {
	id: string;
	base: string;
	quote: string;
	/** Exact, as created. */
	rate: Decimal;
	effective_at: string;
	created_at: string;
}

export interface ExchangeRateInput {
	base: string;
	quote: string;
	rate: number;
	effective_at?: string;
}

type Row = typeof exchangeRates.$inferSelect;

export const fromRow = (row: Row): ExchangeRate => ({
	id: row.id,
	base: row.base,
	quote: row.quote,
	rate: Decimal.from(row.rate),
	effective_at: row.effectiveAt,
	created_at: row.createdAt,
});

export const exchangeRateJson = (rate: ExchangeRate) => ({
	id: rate.id,
	base: rate.base,
	quote: rate.quote,
	rate: rate.rate.toNumber(),
	effective_at: rate.effective_at,
	created_at: rate.created_at,
});

export async function createExchangeRate(
	db: Db,
	scope: Scope,
	input: ExchangeRateInput,
): Promise<ExchangeRate> {
	const createdAt = nowIso();
	const rate: ExchangeRate = {
		id: newId("xr"),
		base: input.base,
		quote: input.quote,
		rate: Decimal.from(input.rate),
		effective_at: input.effective_at === undefined ? createdAt : new Date(input.effective_at).toISOString(),
		created_at: createdAt,
	};
	const insert = db.insert(exchangeRates).values({
		id: rate.id,
		environment: scope.environment,
		base: rate.base,
		quote: rate.quote,
		rate: rate.rate.toString(),
		effectiveAt: rate.effective_at,
		createdAt: rate.created_at,
	});
	const { id: _id, created_at: _createdAt, ...fields } = exchangeRateJson(rate);
	await writeAudited(db, scope, [insert], {
		action: "exchange_rate.created",
		resourceId: rate.id,
		changes: created(fields),
	});
	return rate;
}

/** The rate of base → quote in effect at `at` (ISO 8601 UTC), as stored; null when none is. */
export async function rateInEffect(
	db: Db,
	scope: Scope,
	pair: { base: string; quote: string },
	at: string,
): Promise<ExchangeRate | null> {
	const [row] = await db
		.select()
		.from(exchangeRates)
		.where(
			inScope(
				scope,
				exchangeRates,
				eq(exchangeRates.base, pair.base),
				eq(exchangeRates.quote, pair.quote),
				lte(exchangeRates.effectiveAt, at),
			),
		)
		.orderBy(desc(exchangeRates.effectiveAt), desc(exchangeRates.id))
		.limit(1);
	return row === undefined ? null : fromRow(row);
}

export interface RateFilter {
	base?: string;
	quote?: string;
	limit: number;
	offset: number;
}

/** One page of the environment's rates, newest `effective_at` first (then id), and the count of all matches. */
export async function listExchangeRates(
	db: Db,
	scope: Scope,
	filter: RateFilter,
): Promise<{ rates: ExchangeRate[]; total: number }> {
	const conditions: SQL[] = [];
	if (filter.base !== undefined) conditions.push(eq(exchangeRates.base, filter.base));
	if (filter.quote !== undefined) conditions.push(eq(exchangeRates.quote, filter.quote));
	const where = inScope(scope, exchangeRates, and(...conditions));
	const [rows, [total]] = await db.batch([
		db
			.select()
			.from(exchangeRates)
			.where(where)
			.orderBy(desc(exchangeRates.effectiveAt), desc(exchangeRates.id))
			.limit(filter.limit)
			.offset(filter.offset),
		db.select({ n: count() }).from(exchangeRates).where(where),
	]);
	return { rates: rows.map(fromRow), total: total?.n ?? 0 };
}
