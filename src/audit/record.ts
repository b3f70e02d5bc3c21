/**
 * The audit record of one change, as a statement to put in the same D1 batch as the change: both are stored, or
 * neither (docs/audit-log.md). Secrets never reach a record: whatever a verb passes, fields that name a secret,
 * token, key or hash are dropped here, and a URL keeps only its scheme and host.
 */
import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
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

/** `[before, after]` of the fields whose value differs (compared as JSON). */
export function changed(before: Record<string, unknown>, after: Record<string, unknown>): Changes {
	const out: Changes = {};
	for (const [field, value] of Object.entries(after)) {
		if (value === undefined) continue;
		const old = before[field] ?? null;
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
 * The INSERT of one record. Its `seq` is the next number of the log, taken inside the batch; `at` never goes
 * back against the last record's (clocks of two isolates may disagree by a few milliseconds) and the id is made
 * from `seq`, so ordering by `at`, then id, is the order of writing, and a page never gains records later.
 */
export function auditInsert(d1: D1Database, scope: Scope, change: AuditedChange): D1PreparedStatement {
	const { actor, requestId } = currentAuditContext();
	return d1
		.prepare(
			`INSERT INTO audit_records (seq, id, environment, at, actor_type, key_id, key_prefix, action, resource_type,
				resource_id, request_id, changes)
			SELECT next.seq, 'aud_' || printf('%016d', next.seq), ?1, max(?2, coalesce(next.last_at, '')), ?3, ?4, ?5,
				?6, ?7, ?8, ?9, ?10
			FROM (SELECT coalesce(max(seq), 0) + 1 AS seq,
				(SELECT at FROM audit_records ORDER BY seq DESC LIMIT 1) AS last_at FROM audit_records) AS next`,
		)
		.bind(
			change.environment ?? scope.environment,
			nowIso(),
			actor.type,
			actor.keyId,
			actor.keyPrefix,
			change.action,
			resourceTypeOf(change.action),
			change.resourceId,
			requestId,
			JSON.stringify(withoutSecrets(change.changes ?? {})),
		);
}
