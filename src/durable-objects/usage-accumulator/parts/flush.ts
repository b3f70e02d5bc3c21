/**
 * Copying an accumulator's aggregates to D1, one bounded chunk at a time: read what D1 lacks, write it as one
 * atomic D1 batch, then mark it flushed here. Raw events do not go to D1 (docs/metering.md#where-events-live): they stay in the accumulator
 * (raw-events.ts) and go to the R2 archive (archive.ts).
 *
 * Every statement can be replayed without changing the result — aggregates as absolute values (upsert), outbox
 * rows by their fixed id — so a flush that failed after D1 committed, before the chunk was marked, is simply
 * repeated. An aggregate is marked clean only at the version that was written: one that changed while D1 was
 * being written stays dirty.
 */

import { statement } from "../../../db/batch";
import { newId } from "../../../lib/ids";
import { nowIso } from "../../../lib/time";
import { type OutboxRow, outboxInsertMany } from "../../../webhooks/outbox";
import type { CostRow, DailyRow, ModelCostRow, UnpricedRow } from "../storage/aggregate-rows";
import type { ChunkLimits } from "../storage/event-rows";
import {
	type MetricRow,
	markMetricsFlushed,
	readUnflushedMetrics,
	UNFLUSHED_METRICS_SQL,
} from "../storage/metric-rows";
import type { FlushTarget } from "../types";
import {
	markTriggersFlushed,
	readUnflushedTriggers,
	triggerStatements,
	UNFLUSHED_TRIGGERS_SQL,
} from "./alert-book";
import { metricStatements } from "./metrics";

/** A slice of what D1 does not have yet. */
export interface UnflushedChunk {
	daily: DailyRow[];
	/** Day aggregates of a subscription's events from before its start (docs/billing.md#subscription-lifecycle): they reach D1 unbilled. */
	unbilledDaily: DailyRow[];
	costs: CostRow[];
	/** Costs of LLM calls from the model prices, and the calls no price covered (aggregates.ts). */
	modelCosts: ModelCostRow[];
	unpriced: UnpricedRow[];
	/** Per-period quantities of filtered, max and unique_count sources (metrics.ts). */
	metrics: MetricRow[];
	/** Alerts triggered here (alert-book.ts). */
	triggers: ReturnType<typeof readUnflushedTriggers>;
	lastOutboxSeq: number | null;
	outbox: OutboxRow[];
}

/** The name under which D1 keeps a subscription accumulator's day aggregates of events before its start. */
export function unbilledAccumulatorName(name: string): string {
	return `${name}#unbilled`;
}

export function chunkStatements(
	d1: D1Database,
	target: FlushTarget,
	chunk: UnflushedChunk,
): D1PreparedStatement[] {
	const statements: D1PreparedStatement[] = [];
	const subscriptionId = target.kind === "sub" ? target.id : null;
	const daily = (accumulator: string, owner: string | null, rows: DailyRow[]) =>
		statement(
			d1,
			`INSERT INTO usage_daily (accumulator, environment, subscription_id, agent_key, day, kind, type, field, count, sum)
			SELECT ?1, ?2, ?3, r.value ->> '$.agent_key', r.value ->> '$.day', r.value ->> '$.kind', r.value ->> '$.type',
				r.value ->> '$.field', r.value ->> '$.count', r.value ->> '$.sum'
			FROM json_each(?4) AS r WHERE true
			ON CONFLICT (accumulator, day, agent_key, kind, type, field)
			DO UPDATE SET count = excluded.count, sum = excluded.sum, subscription_id = excluded.subscription_id`,
			accumulator,
			target.environment,
			owner,
			JSON.stringify(rows),
		);
	if (chunk.daily.length > 0) statements.push(daily(target.name, subscriptionId, chunk.daily));
	// Rows of their own in D1 (the accumulator's name marked), without a subscription: listed as unbilled usage,
	// never invoiced.
	if (chunk.unbilledDaily.length > 0) {
		statements.push(daily(unbilledAccumulatorName(target.name), null, chunk.unbilledDaily));
	}
	// A cost table's rows: explicit metadata.cost by cost type (usage_costs), model prices by model
	// (usage_model_costs). The id (migration 0004) is taken by the row's first flush and kept by every later one,
	// retries included, so a cost record's id is sortable by creation time and never changes.
	const costs = (table: "usage_costs" | "usage_model_costs", key: "cost_type" | "model", rows: object[]) =>
		statement(
			d1,
			`INSERT INTO ${table} (accumulator, environment, subscription_id, agent_key, period, ${key}, currency, amount, id)
			SELECT ?1, ?2, ?3, c.value ->> '$.agent_key', c.value ->> '$.period', c.value ->> '$.${key}',
				c.value ->> '$.currency', c.value ->> '$.amount', c.value ->> '$.id'
			FROM json_each(?4) AS c WHERE true
			ON CONFLICT (accumulator, period, agent_key, ${key}, currency)
			DO UPDATE SET amount = excluded.amount, subscription_id = excluded.subscription_id,
				id = coalesce(${table}.id, excluded.id)`,
			target.name,
			target.environment,
			subscriptionId,
			JSON.stringify(rows.map((row) => ({ ...row, id: newId("cost") }))),
		);
	if (chunk.costs.length > 0) statements.push(costs("usage_costs", "cost_type", chunk.costs));
	if (chunk.modelCosts.length > 0) statements.push(costs("usage_model_costs", "model", chunk.modelCosts));
	if (chunk.unpriced.length > 0) {
		statements.push(
			statement(
				d1,
				`INSERT INTO usage_unpriced (accumulator, environment, period, provider, model, events, input_tokens,
					output_tokens, cached_input_tokens, reasoning_tokens)
				SELECT ?1, ?2, u.value ->> '$.period', u.value ->> '$.provider', u.value ->> '$.model',
					u.value ->> '$.events', u.value ->> '$.input_tokens', u.value ->> '$.output_tokens',
					u.value ->> '$.cached_input_tokens', u.value ->> '$.reasoning_tokens'
				FROM json_each(?3) AS u WHERE true
				ON CONFLICT (accumulator, period, provider, model)
				DO UPDATE SET events = excluded.events, input_tokens = excluded.input_tokens,
					output_tokens = excluded.output_tokens, cached_input_tokens = excluded.cached_input_tokens,
					reasoning_tokens = excluded.reasoning_tokens`,
				target.name,
				target.environment,
				JSON.stringify(chunk.unpriced),
			),
		);
	}
	statements.push(...metricStatements(d1, target, chunk.metrics));
	statements.push(...triggerStatements(d1, target, chunk.triggers));
	statements.push(...outboxInsertMany(d1, target.environment, chunk.outbox, nowIso()));
	return statements;
}

/** Rows of an aggregate table changed since they were last flushed. */
function unflushedRows<T extends Record<string, SqlStorageValue>>(
	sql: SqlStorage,
	table: string,
	rows: number,
): T[] {
	return sql.exec<T>(`SELECT * FROM ${table} WHERE version > flushed_version LIMIT ?`, rows).toArray();
}

export function readUnflushed(sql: SqlStorage, limits: ChunkLimits): UnflushedChunk {
	const outbox = sql
		.exec<{ seq: number; id: string; event: string; data: string }>(
			"SELECT seq, id, event, data FROM outbox ORDER BY seq LIMIT ?",
			limits.rows,
		)
		.toArray();
	return {
		daily: unflushedRows<DailyRow>(sql, "daily", limits.rows),
		unbilledDaily: unflushedRows<DailyRow>(sql, "daily_unbilled", limits.rows),
		costs: unflushedRows<CostRow>(sql, "costs", limits.rows),
		modelCosts: unflushedRows<ModelCostRow>(sql, "model_costs", limits.rows),
		unpriced: unflushedRows<UnpricedRow>(sql, "unpriced", limits.rows),
		metrics: readUnflushedMetrics(sql, limits.rows),
		triggers: readUnflushedTriggers(sql, limits.rows),
		lastOutboxSeq: outbox.at(-1)?.seq ?? null,
		outbox: outbox.map(({ id, event, data }) => ({ id, event, data })),
	};
}

/** Whether a list of the chunk reached the row limit, so that more may be left to read. */
export function isFull(chunk: UnflushedChunk, limits: ChunkLimits): boolean {
	return [
		chunk.outbox,
		chunk.daily,
		chunk.unbilledDaily,
		chunk.costs,
		chunk.modelCosts,
		chunk.unpriced,
		chunk.metrics,
		chunk.triggers,
	].some((rows) => rows.length >= limits.rows);
}

/**
 * After D1 accepted a chunk: outbox rows of the chunk are gone from here; an aggregate row is
 * clean only at the version that was written, so one that changed meanwhile is flushed again.
 */
export function markFlushed(storage: DurableObjectStorage, chunk: UnflushedChunk): void {
	const sql = storage.sql;
	storage.transactionSync(() => {
		if (chunk.lastOutboxSeq !== null) sql.exec("DELETE FROM outbox WHERE seq <= ?", chunk.lastOutboxSeq);
		// Only ever forwards: a row already marked at a later version by a newer flush stays so.
		for (const [table, rows] of [
			["daily", chunk.daily],
			["daily_unbilled", chunk.unbilledDaily],
		] as const) {
			if (rows.length === 0) continue;
			sql.exec(
				`UPDATE ${table} AS d SET flushed_version = f.value ->> 5
				FROM json_each(?) AS f
				WHERE d.day = f.value ->> 0 AND d.agent_key = f.value ->> 1 AND d.kind = f.value ->> 2
					AND d.type = f.value ->> 3 AND d.field = f.value ->> 4 AND d.flushed_version < f.value ->> 5`,
				JSON.stringify(rows.map((r) => [r.day, r.agent_key, r.kind, r.type, r.field, r.version])),
			);
		}
		if (chunk.costs.length > 0) {
			sql.exec(
				`UPDATE costs SET flushed_version = f.value ->> 4
				FROM json_each(?) AS f
				WHERE costs.period = f.value ->> 0 AND costs.agent_key = f.value ->> 1 AND costs.cost_type = f.value ->> 2
					AND costs.currency = f.value ->> 3 AND costs.flushed_version < f.value ->> 4`,
				JSON.stringify(chunk.costs.map((r) => [r.period, r.agent_key, r.cost_type, r.currency, r.version])),
			);
		}
		if (chunk.modelCosts.length > 0) {
			sql.exec(
				`UPDATE model_costs SET flushed_version = f.value ->> 4
				FROM json_each(?) AS f
				WHERE model_costs.period = f.value ->> 0 AND model_costs.agent_key = f.value ->> 1
					AND model_costs.model = f.value ->> 2 AND model_costs.currency = f.value ->> 3
					AND model_costs.flushed_version < f.value ->> 4`,
				JSON.stringify(chunk.modelCosts.map((r) => [r.period, r.agent_key, r.model, r.currency, r.version])),
			);
		}
		if (chunk.unpriced.length > 0) {
			sql.exec(
				`UPDATE unpriced SET flushed_version = f.value ->> 3
				FROM json_each(?) AS f
				WHERE unpriced.period = f.value ->> 0 AND unpriced.provider = f.value ->> 1
					AND unpriced.model = f.value ->> 2 AND unpriced.flushed_version < f.value ->> 3`,
				JSON.stringify(chunk.unpriced.map((r) => [r.period, r.provider, r.model, r.version])),
			);
		}
		markMetricsFlushed(sql, chunk.metrics);
		markTriggersFlushed(sql, chunk.triggers);
	});
}

export function hasUnflushed(sql: SqlStorage): boolean {
	const row = sql
		.exec<{ dirty: number }>(
			`SELECT EXISTS (SELECT 1 FROM outbox)
			OR EXISTS (SELECT 1 FROM daily WHERE version > flushed_version)
			OR EXISTS (SELECT 1 FROM daily_unbilled WHERE version > flushed_version)
			OR EXISTS (SELECT 1 FROM costs WHERE version > flushed_version)
			OR EXISTS (SELECT 1 FROM model_costs WHERE version > flushed_version)
			OR EXISTS (SELECT 1 FROM unpriced WHERE version > flushed_version) OR ${UNFLUSHED_METRICS_SQL}
			OR ${UNFLUSHED_TRIGGERS_SQL} AS dirty`,
		)
		.one();
	return row.dirty === 1;
}
