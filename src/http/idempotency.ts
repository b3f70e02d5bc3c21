import { and, eq, lt } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { database } from "../db/client";
import { idempotencyRecords } from "../db/schema";
import { nowIso, sha256Hex } from "../lib/time";
import type { AppEnv } from "./context";
import { ApiError, validationError } from "./errors";

const TTL_MS = 24 * 60 * 60 * 1000;
// Metering events carry their own deduplication (the accumulator's), for 35 days instead of 24 hours.
export const EVENT_PATHS = new Set([
	"/v1/actions",
	"/v1/actions/batch",
	"/v1/outcomes",
	"/v1/outcomes/batch",
]);

/**
 * `Idempotency-Key` on any POST: the first request claims the key, its completed response is stored and
 * replayed for 24 hours. A 5xx is not kept, so the client may try again.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
	const key = c.req.header("Idempotency-Key");
	if (c.req.method !== "POST" || key === undefined || EVENT_PATHS.has(c.req.path)) return next();
	if (key.length < 1 || key.length > 255) {
		throw validationError("Idempotency-Key", "The Idempotency-Key header must be 1–255 characters.");
	}
	const db = database(c.env.DB);
	const id = { environment: c.get("scope").environment, method: c.req.method, path: c.req.path, key };
	const where = and(
		eq(idempotencyRecords.environment, id.environment),
		eq(idempotencyRecords.method, id.method),
		eq(idempotencyRecords.path, id.path),
		eq(idempotencyRecords.key, id.key),
	);
	const requestHash = await sha256Hex(await c.req.text());
	const now = nowIso();

	const [, claimed] = await db.batch([
		db.delete(idempotencyRecords).where(and(where, lt(idempotencyRecords.expiresAt, now))),
		db
			.insert(idempotencyRecords)
			.values({
				...id,
				requestHash,
				state: "in_progress",
				createdAt: now,
				expiresAt: new Date(Date.now() + TTL_MS).toISOString(),
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
				"A request with this Idempotency-Key is still in progress.",
			);
		}
		c.header("Idempotent-Replayed", "true");
		c.header("Content-Type", "application/json");
		return c.body(existing.responseBody ?? "", (existing.statusCode ?? 200) as ContentfulStatusCode);
	}

	await next();
	if (c.res.status >= 500) {
		await db.delete(idempotencyRecords).where(where);
		return;
	}
	const body = await c.res.clone().text();
	await db
		.update(idempotencyRecords)
		.set({ state: "completed", statusCode: c.res.status, responseBody: body })
		.where(where);
};
