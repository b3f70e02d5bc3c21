import { and, eq, lt, or } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { database } from "../db/client";
import { idempotencyRecords } from "../db/schema";
import { validationError } from "../lib/errors";
import { sha256Hex } from "../lib/sha256";
import type { AppContext, AppEnv } from "./context";
import { ApiError } from "./errors";

const TTL_MS = 24 * 60 * 60 * 1000;
/** A first request still in progress after this long is taken as dead (its Worker was killed): docs/conventions.md#the-idempotency-key-header. */
export const ABANDONED_AFTER_MS = 60 * 1000;
// Metering events carry their own deduplication (the accumulator's), for 35 days instead of 24 hours.
export const EVENT_PATHS = new Set([
	"/v1/actions",
	"/v1/actions/batch",
	"/v1/outcomes",
	"/v1/outcomes/batch",
]);

/**
 * A route whose response carries a secret names its field here; the stored copy keeps that field as null, so
 * a replay shows `null` and no secret is ever kept in an idempotency record.
 */
export function responseCarriesSecret(c: AppContext, field: string): void {
	c.set("secretFields", [...(c.get("secretFields") ?? []), field]);
}

/**
 * `Idempotency-Key` on any POST, scoped to the environment, the calling key, the method and the path: the first
 * request claims the key, its completed response is stored and replayed for 24 hours. A 5xx is not kept, so the
 * client may try again; a claim still in progress after 60 seconds is abandoned and the next request takes it.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
	const key = c.req.header("Idempotency-Key");
	if (c.req.method !== "POST" || key === undefined || EVENT_PATHS.has(c.req.path)) return next();
	if (key.length < 1 || key.length > 255) {
		throw validationError("Idempotency-Key", "The Idempotency-Key header must be 1–255 characters.");
	}
	const db = database(c.env.DB);
	const id = {
		environment: c.get("scope").environment,
		keyId: c.get("principal").keyId,
		method: c.req.method,
		path: c.req.path,
		key,
	};
	const where = and(
		eq(idempotencyRecords.environment, id.environment),
		eq(idempotencyRecords.keyId, id.keyId),
		eq(idempotencyRecords.method, id.method),
		eq(idempotencyRecords.path, id.path),
		eq(idempotencyRecords.key, id.key),
	);
	const requestHash = sha256Hex(await c.req.text());
	const started = Date.now();
	const now = new Date(started).toISOString();
	const claimId = crypto.randomUUID();
	const ours = and(where, eq(idempotencyRecords.claimId, claimId));

	const [, claimed] = await db.batch([
		db
			.delete(idempotencyRecords)
			.where(
				and(
					where,
					or(
						lt(idempotencyRecords.expiresAt, now),
						and(
							eq(idempotencyRecords.state, "in_progress"),
							lt(idempotencyRecords.createdAt, new Date(started - ABANDONED_AFTER_MS).toISOString()),
						),
					),
				),
			),
		db
			.insert(idempotencyRecords)
			.values({
				...id,
				requestHash,
				claimId,
				state: "in_progress",
				createdAt: now,
				expiresAt: new Date(started + TTL_MS).toISOString(),
			})
			.onConflictDoNothing()
			.returning({ key: idempotencyRecords.key }),
	]);
	if (claimed.length === 0) {
		const [existing] = await db.select().from(idempotencyRecords).where(where);
		if (!existing)
			throw new ApiError("idempotency_key_in_use", "A request with this Idempotency-Key is in progress.");
		if (existing.requestHash !== requestHash) {
			throw new ApiError(
				"idempotency_key_reused",
				"This Idempotency-Key was used with a different request body.",
			);
		}
		if (existing.state === "in_progress") {
			throw new ApiError(
				"idempotency_key_in_use",
				"A request with this Idempotency-Key is still in progress; retry in a few seconds.",
			);
		}
		c.header("Idempotent-Replayed", "true");
		c.header("Content-Type", "application/json");
		return c.body(existing.responseBody ?? "", (existing.statusCode ?? 200) as ContentfulStatusCode);
	}

	await next();
	if (c.res.status >= 500) {
		await db.delete(idempotencyRecords).where(ours);
		return;
	}
	const body = withoutSecrets(await c.res.clone().text(), c.get("secretFields") ?? []);
	await db
		.update(idempotencyRecords)
		.set({ state: "completed", statusCode: c.res.status, responseBody: body })
		.where(ours);
};

function withoutSecrets(body: string, fields: string[]): string {
	if (fields.length === 0 || !body.startsWith("{")) return body;
	const parsed = JSON.parse(body) as Record<string, unknown>;
	for (const field of fields) if (field in parsed) parsed[field] = null;
	return JSON.stringify(parsed);
}
