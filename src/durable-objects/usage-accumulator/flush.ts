/**
 * Copying an accumulator to D1, one bounded chunk at a time: read what D1 lacks, write it as one atomic D1 batch,
 * then mark it flushed here. Every statement can be replayed without changing the result — events by id with
 * ON CONFLICT DO NOTHING, aggregates as absolute values (upsert), outbox rows by their fixed id — so a flush that
 * failed after D1 committed, before the chunk was marked, is simply repeated. An aggregate is marked clean only
 * at the version that was written: one that changed while D1 was being written stays dirty.
 */
import { database } from "../../db/client";
import { fromDrizzle, statement } from "../../metering/d1-batch";
import { outboxInsert, type WebhookEventKind } from "../../webhooks/outbox";
import type { CostRow, DailyRow } from "./aggregates";
import type { AccumulatorIdentity } from "./client";

/** A slice of what D1 does not have yet. `events` are usage_events rows as JSON text. */
export interface UnflushedChunk {
	lastEventSeq: number | null;
	events: string[];
	daily: DailyRow[];
	costs: CostRow[];
	lastOutboxSeq: number | null;
	outbox: { id: string; event: string; data: string }[];
}

export interface ChunkLimits {
	events: number;
	/** Bytes of event JSON per chunk (one D1 parameter); at least one event is always taken. */
	eventBytes: number;
	rows: number;
}

export interface FlushTarget extends AccumulatorIdentity {
	name: string;
}

export function chunkStatements(
	d1: D1Database,
	target: FlushTarget,
	chunk: UnflushedChunk,
): D1PreparedStatement[] {
	const statements: D1PreparedStatement[] = [];
	const subscriptionId = target.kind === "sub" ? target.id : null;
	if (chunk.events.length > 0) {
		statements.push(
			statement(
				d1,
				`INSERT INTO usage_events (id, environment, kind, agent_key, type, value, metadata, timestamp, received_at,
					subscription_id, accumulator, idempotency_key)
				SELECT e.value ->> '$.id', ?1, e.value ->> '$.kind', e.value ->> '$.agent_key', e.value ->> '$.type',
					e.value ->> '$.value', e.value ->> '$.metadata', e.value ->> '$.timestamp', e.value ->> '$.received_at',
					e.value ->> '$.subscription_id', ?2, e.value ->> '$.idempotency_key'
				FROM json_each(?3) AS e WHERE true
				ON CONFLICT DO NOTHING`,
				target.environment,
				target.name,
				`[${chunk.events.join(",")}]`,
			),
		);
	}
	if (chunk.daily.length > 0) {
		statements.push(
			statement(
				d1,
				`INSERT INTO usage_daily (accumulator, environment, subscription_id, agent_key, day, kind, type, field, count, sum)
				SELECT ?1, ?2, ?3, r.value ->> '$.agent_key', r.value ->> '$.day', r.value ->> '$.kind', r.value ->> '$.type',
					r.value ->> '$.field', r.value ->> '$.count', r.value ->> '$.sum'
				FROM json_each(?4) AS r WHERE true
				ON CONFLICT (accumulator, day, agent_key, kind, type, field)
				DO UPDATE SET count = excluded.count, sum = excluded.sum, subscription_id = excluded.subscription_id`,
				target.name,
				target.environment,
				subscriptionId,
				JSON.stringify(chunk.daily),
			),
		);
	}
	if (chunk.costs.length > 0) {
		statements.push(
			statement(
				d1,
				`INSERT INTO usage_costs (accumulator, environment, subscription_id, agent_key, period, cost_type, currency, amount)
				SELECT ?1, ?2, ?3, c.value ->> '$.agent_key', c.value ->> '$.period', c.value ->> '$.cost_type',
					c.value ->> '$.currency', c.value ->> '$.amount'
				FROM json_each(?4) AS c WHERE true
				ON CONFLICT (accumulator, period, agent_key, cost_type, currency)
				DO UPDATE SET amount = excluded.amount, subscription_id = excluded.subscription_id`,
				target.name,
				target.environment,
				subscriptionId,
				JSON.stringify(chunk.costs),
			),
		);
	}
	const db = database(d1);
	for (const row of chunk.outbox) {
		const data = JSON.parse(row.data) as Record<string, unknown>;
		const insert = outboxInsert(db, target, row.event as WebhookEventKind, data, row.id);
		statements.push(fromDrizzle(d1, insert));
	}
	return statements;
}

export function readUnflushed(sql: SqlStorage, limits: ChunkLimits): UnflushedChunk {
	const eventRows = sql
		.exec<{ seq: number; row: string }>("SELECT seq, row FROM events ORDER BY seq LIMIT ?", limits.events)
		.toArray();
	const events: string[] = [];
	let bytes = 0;
	let lastEventSeq: number | null = null;
	for (const { seq, row } of eventRows) {
		if (events.length > 0 && bytes + row.length > limits.eventBytes) break;
		events.push(row);
		bytes += row.length;
		lastEventSeq = seq;
	}
	const outbox = sql
		.exec<{ seq: number; id: string; event: string; data: string }>(
			"SELECT seq, id, event, data FROM outbox ORDER BY seq LIMIT ?",
			limits.rows,
		)
		.toArray();
	return {
		lastEventSeq,
		events,
		daily: sql
			.exec<DailyRow>("SELECT * FROM daily WHERE version > flushed_version LIMIT ?", limits.rows)
			.toArray(),
		costs: sql
			.exec<CostRow>("SELECT * FROM costs WHERE version > flushed_version LIMIT ?", limits.rows)
			.toArray(),
		lastOutboxSeq: outbox.at(-1)?.seq ?? null,
		outbox: outbox.map(({ id, event, data }) => ({ id, event, data })),
	};
}

/**
 * After D1 accepted a chunk: events and outbox rows of the chunk are gone from here; an aggregate row is
 * clean only at the version that was written, so one that changed meanwhile is flushed again.
 */
export function markFlushed(storage: DurableObjectStorage, chunk: UnflushedChunk): void {
	const sql = storage.sql;
	storage.transactionSync(() => {
		if (chunk.lastEventSeq !== null) sql.exec("DELETE FROM events WHERE seq <= ?", chunk.lastEventSeq);
		if (chunk.lastOutboxSeq !== null) sql.exec("DELETE FROM outbox WHERE seq <= ?", chunk.lastOutboxSeq);
		for (const row of chunk.daily) {
			sql.exec(
				`UPDATE daily SET flushed_version = ?1 WHERE day = ?2 AND agent_key = ?3 AND kind = ?4 AND type = ?5
				AND field = ?6 AND flushed_version < ?1`,
				row.version,
				row.day,
				row.agent_key,
				row.kind,
				row.type,
				row.field,
			);
		}
		for (const row of chunk.costs) {
			sql.exec(
				`UPDATE costs SET flushed_version = ?1 WHERE period = ?2 AND agent_key = ?3 AND cost_type = ?4
				AND currency = ?5 AND flushed_version < ?1`,
				row.version,
				row.period,
				row.agent_key,
				row.cost_type,
				row.currency,
			);
		}
	});
}

export function hasUnflushed(sql: SqlStorage): boolean {
	const row = sql
		.exec<{ dirty: number }>(
			`SELECT EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM outbox)
			OR EXISTS (SELECT 1 FROM daily WHERE version > flushed_version)
			OR EXISTS (SELECT 1 FROM costs WHERE version > flushed_version) AS dirty`,
		)
		.one();
	return row.dirty === 1;
}
