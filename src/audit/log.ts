/**
 * Reading the audit log: newest first, a page at a time. A cursor is the `seq` of the last record of its page
 * (record.ts), so the next page starts right after it whatever was written since: later records have greater
 * seqs and sort before it, never after.
 */
import { and, desc, eq, gte, lt, type SQL } from "drizzle-orm";
import type { InScope } from "../db/rows";
import { auditRecords } from "../db/schema";
import { inScope } from "../db/scope";
import { validationError } from "../lib/errors";
import type { ActorType } from "./context";

export interface AuditRecordView {
	id: string;
	at: string;
	actor: { type: ActorType; key_id: string | null; key_prefix: string | null };
	action: string;
	resource_type: string;
	resource_id: string;
	request_id: string | null;
	changes: Record<string, unknown[]>;
}

export interface AuditLogFilter {
	resourceId?: string;
	keyId?: string;
	action?: string;
	/** Inclusive, an ISO instant. */
	from?: string;
	/** Exclusive, an ISO instant. */
	until?: string;
}

const CURSOR_PREFIX = "a1.";

export function encodeCursor(seq: number): string {
	return btoa(`${CURSOR_PREFIX}${seq}`).replace(/=+$/, "");
}

export function decodeCursor(cursor: string): number {
	let text = "";
	try {
		text = atob(cursor);
	} catch {}
	const seq = text.startsWith(CURSOR_PREFIX) ? Number(text.slice(CURSOR_PREFIX.length)) : Number.NaN;
	if (!Number.isSafeInteger(seq) || seq < 1 || !/^\d+$/.test(text.slice(CURSOR_PREFIX.length))) {
		throw validationError("cursor", "Not a cursor of this list: pass the next_cursor of a previous page.");
	}
	return seq;
}

function toView(row: typeof auditRecords.$inferSelect): AuditRecordView {
	return {
		id: row.id,
		at: row.at,
		actor: { type: row.actorType, key_id: row.keyId, key_prefix: row.keyPrefix },
		action: row.action,
		resource_type: row.resourceType,
		resource_id: row.resourceId,
		request_id: row.requestId,
		changes: row.changes,
	};
}

export async function listAuditRecords({
	db,
	scope,
	filter,
	limit,
	cursor,
}: InScope & {
	filter: AuditLogFilter;
	limit: number;
	cursor?: string;
}): Promise<{ records: AuditRecordView[]; nextCursor: string | null }> {
	const conditions: (SQL | undefined)[] = [
		filter.resourceId === undefined ? undefined : eq(auditRecords.resourceId, filter.resourceId),
		filter.keyId === undefined ? undefined : eq(auditRecords.keyId, filter.keyId),
		filter.action === undefined ? undefined : eq(auditRecords.action, filter.action),
		filter.from === undefined ? undefined : gte(auditRecords.at, filter.from),
		filter.until === undefined ? undefined : lt(auditRecords.at, filter.until),
		cursor === undefined ? undefined : lt(auditRecords.seq, decodeCursor(cursor)),
	];
	const rows = await db
		.select()
		.from(auditRecords)
		.where(and(inScope(scope, auditRecords), ...conditions))
		.orderBy(desc(auditRecords.seq))
		.limit(limit + 1);
	const page = rows.slice(0, limit);
	const last = page.at(-1);
	return {
		records: page.map(toView),
		nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : null,
	};
}
