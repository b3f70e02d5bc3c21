import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { ADMIN } from "../http/permissions";
import { apiRouter } from "../http/router";
import { instantRange } from "../lib/date-range";
import { validationError } from "../lib/errors";
import { DateParam } from "../schemas/dates";
import { integerQuery } from "../schemas/query";
import { listAuditRecords } from "./log";

const AuditRecord = z
	.object({
		id: z.string().openapi({ example: "aud_0000000000000042" }),
		at: z.string().openapi({ example: "2026-11-21T10:00:00.000Z" }),
		actor: z.object({
			type: z.enum(["operator", "api_key", "sdk_key", "portal", "system"]),
			key_id: z
				.string()
				.nullable()
				.openapi({ description: "The key that made the change; null for the operator key and the system." }),
			key_prefix: z
				.string()
				.nullable()
				.openapi({ description: "That key's display prefix, never more of it." }),
		}),
		action: z
			.string()
			.openapi({ example: "account.updated", description: "`<resource>.<past participle>`." }),
		resource_type: z.string().openapi({ example: "account" }),
		resource_id: z.string().openapi({ example: "acct_01jd0000000000000000000000" }),
		request_id: z
			.string()
			.nullable()
			.openapi({ description: "The X-Request-Id of the request; null for the system." }),
		changes: z.record(z.string(), z.array(z.unknown())).openapi({
			description:
				"`{field: [before, after]}`; a create lists `{field: [after]}`, a delete `{field: [before, null]}`. Secrets, tokens and keys never appear; URLs keep only their origin.",
			example: { email: ["billing@acme.test", "finance@acme.test"] },
		}),
	})
	.openapi("AuditRecord");

const AuditLogQuery = z.strictObject({
	resource_id: z.string().min(1).max(200).optional(),
	key_id: z.string().min(1).max(200).optional().openapi({ description: "The key that made the change." }),
	action: z
		.string()
		.regex(
			/^[a-z0-9_]{1,64}\.[a-z0-9_]{1,64}$/,
			"must be `<resource>.<past participle>`, e.g. account.updated",
		)
		.optional(),
	start_date: DateParam.optional().openapi({ description: "Inclusive." }),
	end_date: DateParam.optional().openapi({
		description: "Inclusive (a bare date covers its whole UTC day).",
	}),
	limit: integerQuery({ min: 1, max: 100 })
		.default(20)
		.openapi({ type: "integer", minimum: 1, maximum: 100, description: "Page size, 1–100.", example: 20 }),
	cursor: z.string().min(1).max(200).optional().openapi({ description: "next_cursor of the previous page." }),
});

const AuditLogPage = z
	.object({
		records: z.array(AuditRecord),
		next_cursor: z.string().nullable().openapi({ description: "null on the last page." }),
	})
	.openapi("AuditLogPage");

// ISO text sorts as time only within years 0000–9999 (toISOString writes "+010000-…" beyond): a bound outside
// them is no bound at all, or one nothing meets ("~" sorts after every date, "" before).
const lowerBound = (date: Date): string | undefined =>
	date.getUTCFullYear() < 0 ? undefined : date.getUTCFullYear() > 9999 ? "~" : date.toISOString();
const upperBound = (date: Date): string | undefined =>
	date.getUTCFullYear() < 0 ? "" : date.getUTCFullYear() > 9999 ? undefined : date.toISOString();

export const auditRoutes = apiRouter();

auditRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/audit-log",
		operationId: "listAuditLog",
		tags: ["Audit log"],
		summary: "Who changed what: the audit log, newest first",
		description:
			"One record per change made by a request (every POST, PATCH and DELETE except events and reservations) or by the service itself (actor `system`), written together with the change. Newest first (`at`, then `id`); a cursor continues right after its page's last record, so records written meanwhile never shift later pages. Records are never changed or deleted, and kept at least 400 days. Admin keys only.",
		request: { query: AuditLogQuery },
		responses: {
			200: { description: "A page of records", content: { "application/json": { schema: AuditLogPage } } },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const from =
			query.start_date === undefined ? undefined : instantRange(query.start_date, query.start_date).start;
		const until = query.end_date === undefined ? undefined : instantRange(query.end_date, query.end_date).end;
		if (from !== undefined && until !== undefined && from >= until) {
			throw validationError("start_date", "start_date must not be after end_date.");
		}
		const { records, nextCursor } = await listAuditRecords({
			...scopeOf(c),
			filter: {
				resourceId: query.resource_id,
				keyId: query.key_id,
				action: query.action,
				from: from === undefined ? undefined : lowerBound(from),
				until: until === undefined ? undefined : upperBound(until),
			},
			limit: query.limit,
			cursor: query.cursor,
		});
		return c.json({ records, next_cursor: nextCursor }, 200);
	},
);
