import type { MiddlewareHandler } from "hono";
import type { WriteMark } from "../db/write-once";
import { validationError } from "../lib/errors";
import { ApiError } from "./api-error";
import type { AppContext, AppEnv } from "./context";

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
 * A write that moves money or numbers a document, run once per Idempotency-Key (db/write-once.ts): `write` gets
 * the mark to put in its batch; when an earlier request with this key stored its write but died before its answer
 * was kept, `replay` answers from the ids that write stored, and nothing is written again.
 */
export async function writeOnce<T>(
	c: AppContext,
	write: (mark: WriteMark | undefined) => Promise<T>,
	replay: (ids: string[], mark: WriteMark | undefined) => Promise<T>,
): Promise<T> {
	// Imported here: a write's mark hashes its key with node:crypto, which the ingest app does not load at startup.
	const { isClaimLost, writeMark } = await import("../db/write-once");
	const claim = c.get("idempotencyClaim");
	const mark = claim === undefined ? undefined : writeMark(claim);
	try {
		const committed = c.get("idempotencyCommitted");
		return committed === undefined ? await write(mark) : await replay(committed, mark);
	} catch (error) {
		if (!isClaimLost(error)) throw error;
		throw new ApiError(
			"idempotency_key_in_use",
			"A repeat of this request with the same Idempotency-Key took it over; nothing was stored by this one.",
		);
	}
}

/**
 * `Idempotency-Key` on any POST, scoped to the environment, the calling key, the method and the path: the first
 * request claims the key, its completed response is stored and replayed for 24 hours. Requests are compared by
 * their parsed JSON (key order and whitespace do not count). A 5xx is not kept, so the client may try again.
 * A claim still in progress after 60 seconds stored nothing (a write marks it committed in its own batch) and is
 * taken over by the next request; a committed claim whose response was lost is taken over and answered from
 * what it stored (writeOnce).
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
	const key = c.req.header("Idempotency-Key");
	if (c.req.method !== "POST" || key === undefined || EVENT_PATHS.has(c.req.path)) return next();
	if (key.length < 1 || key.length > 255) {
		throw validationError("Idempotency-Key", "The Idempotency-Key header must be 1–255 characters.");
	}
	return (await import("./idempotency-claim")).claimThenAnswer(c, next, key);
};
