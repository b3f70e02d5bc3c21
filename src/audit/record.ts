/**
 * The audit record of one change, as a statement to put in the same D1 batch as the change: both are stored, or
 * neither (docs/audit-log.md). Secrets never reach a record: whatever a verb passes, fields that name a secret,
 * token, key or hash are dropped here, and a URL keeps only its scheme and host.
 */
import { getTableColumns, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { chunkJsonRows } from "../db/batch";
import type { Db } from "../db/client";
import { auditRecords } from "../db/schema";
import type { Scope } from "../db/scope";
import { nowIso } from "../lib/time";
import { currentAuditContext } from "./context";

/** `{field: [before, after]}` for a change, `{field: [after]}` for a create. */
export type Changes = Record<string, unknown[]>;

export interface AuditedChange {
	/** `<resource>.<past participle>` in snake case: "agent.created", "api_key.revoked". */
	action: string;
	resourceId: string;
	changes?: Changes;
	/** The environment the resource lives in, when it is not the caller's (an API key made for the other one). */
	environment?: string;
}

const SECRET_FIELD = /secret|token|hash|password|^key$|(^|_)key_material/i;
const URL_FIELD = /(^|_)url$/i;

/** `https://hooks.example.com/…`: a URL may carry a token in its path or query, so only its origin is kept. */
export function urlOrigin(value: unknown): unknown {
	if (typeof value !== "string") return value;
	try {
		const url = new URL(value);
		return `${url.protocol}//${url.host}${url.pathname === "/" && !url.search ? "/" : "/…"}`;
	} catch {
		return "…";
	}
}

export function withoutSecrets(changes: Changes): Changes {
	const out: Changes = {};
	for (const [field, values] of Object.entries(changes)) {
		if (SECRET_FIELD.test(field)) continue;
		out[field] = URL_FIELD.test(field) ? values.map(urlOrigin) : values;
	}
	return out;
}

/** The changes of a create: every field's value, as `[after]` (undefined fields left out). */
export function created(fields: Record<string, unknown>): Changes {
	const out: Changes = {};
	for (const [field, value] of Object.entries(fields)) if (value !== undefined) out[field] = [value];
	return out;
}

/** The changes of a delete: what each field was, as `[before, null]`. */
export function removed(fields: Record<string, unknown>): Changes {
	const out: Changes = {};
	for (const [field, value] of Object.entries(fields)) if (value !== undefined) out[field] = [value, null];
	return out;
}

/** `[before, after]` of the fields whose value differs (compared as JSON). */
export function changed(before: object, after: object): Changes {
	const out: Changes = {};
	for (const [field, value] of Object.entries(after)) {
		if (value === undefined) continue;
		const old = (before as Record<string, unknown>)[field] ?? null;
		if (JSON.stringify(old) !== JSON.stringify(value)) out[field] = [old, value];
	}
	return out;
}

/**
 * `changed` for a drizzle row and the `set` of its update, by column name (`billing_address`, as the API names
 * fields). `updated_at` is left out: the record's own time says when.
 */
export function changedColumns(
	table: SQLiteTable,
	before: Record<string, unknown>,
	set: Record<string, unknown>,
): Changes {
	const columns = getTableColumns(table);
	const named = (row: Record<string, unknown>, only: Record<string, unknown>) => {
		const out: Record<string, unknown> = {};
		for (const property of Object.keys(only)) {
			const name = columns[property]?.name ?? property;
			if (name !== "updated_at") out[name] = row[property];
		}
		return out;
	};
	return changed(named(before, set), named(set, set));
}

/** The resource of an action: "api_key" of "api_key.revoked". */
export function resourceTypeOf(action: string): string {
	return action.slice(0, action.lastIndexOf("."));
}

/**
 * The INSERTs of the records of `changes`: one statement for as many records as fit a JSON parameter. Each
 * record's `seq` is the next number of the log, taken inside the batch; `at` never goes back against the last
 * record's (clocks of two isolates may disagree by a few milliseconds) and the id is made from `seq`, so ordering
 * by `at`, then id, is the order of writing, and a page never gains records later.
 */
export function auditInserts(
	d1: D1Database,
	scope: Scope,
	changes: readonly AuditedChange[],
): D1PreparedStatement[] {
	const { actor, requestId } = currentAuditContext();
	const at = nowIso();
	const rows = changes.map((change) =>
		JSON.stringify({
			environment: change.environment ?? scope.environment,
			action: change.action,
			resource_type: resourceTypeOf(change.action),
			resource_id: change.resourceId,
			changes: withoutSecrets(change.changes ?? {}),
		}),
	);
	return chunkJsonRows(rows).map((group) =>
		d1
			.prepare(
				`INSERT INTO audit_records (seq, id, environment, at, actor_type, key_id, key_prefix, action, resource_type,
					resource_id, request_id, changes)
				SELECT next.seq + r.key, 'aud_' || printf('%016d', next.seq + r.key), r.value ->> '$.environment',
					max(?1, coalesce(next.last_at, '')), ?2, ?3, ?4, r.value ->> '$.action', r.value ->> '$.resource_type',
					r.value ->> '$.resource_id', ?5, r.value ->> '$.changes'
				FROM (SELECT coalesce(max(seq), 0) + 1 AS seq,
					(SELECT at FROM audit_records ORDER BY seq DESC LIMIT 1) AS last_at FROM audit_records) AS next,
					json_each(?6) AS r`,
			)
			.bind(at, actor.type, actor.keyId, actor.keyPrefix, requestId, `[${group.join(",")}]`),
	);
}

/** The record of one change as a drizzle query, for a batch of drizzle queries (`db.batch([...])`). */
export function auditRecordInsert(db: Db, scope: Scope, change: AuditedChange) {
	const { actor, requestId } = currentAuditContext();
	const row = JSON.stringify({
		environment: change.environment ?? scope.environment,
		action: change.action,
		resource_type: resourceTypeOf(change.action),
		resource_id: change.resourceId,
		changes: withoutSecrets(change.changes ?? {}),
	});
	// The columns in the table's order, as drizzle lists them for INSERT … SELECT.
	return db.insert(auditRecords).select(
		sql`SELECT next.seq, 'aud_' || printf('%016d', next.seq), r.value ->> '$.environment',
			max(${nowIso()}, coalesce(next.last_at, '')), ${actor.type}, ${actor.keyId}, ${actor.keyPrefix},
			r.value ->> '$.action', r.value ->> '$.resource_type', r.value ->> '$.resource_id', ${requestId},
			r.value ->> '$.changes'
		FROM (SELECT coalesce(max(seq), 0) + 1 AS seq,
			(SELECT at FROM audit_records ORDER BY seq DESC LIMIT 1) AS last_at FROM audit_records) AS next,
			json_each(${`[${row}]`}) AS r`,
	);
}

/**
 * Adds `{field: [null, value]}` to the record the batch wrote last, for a value only the batch itself knows (an
 * invoice number drawn from a counter): `valueSql` is a scalar subquery whose parameters are ?2 onwards. Put it
 * right after that record's INSERT in the same batch, so the record is never seen without it.
 */
export function auditAfterFromBatch(
	d1: D1Database,
	field: string,
	valueSql: string,
	...params: unknown[]
): D1PreparedStatement {
	return d1
		.prepare(
			`UPDATE audit_records SET changes = json_set(changes, ?1, json_array(NULL, (${valueSql})))
			WHERE seq = (SELECT max(seq) FROM audit_records)`,
		)
		.bind(`$.${field}`, ...params);
}

/** The INSERT of one change's record (auditInserts). */
export function auditInsert(d1: D1Database, scope: Scope, change: AuditedChange): D1PreparedStatement {
	return auditInserts(d1, scope, [change])[0] as D1PreparedStatement;
}
