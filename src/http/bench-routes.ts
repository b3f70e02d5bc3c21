import { rateLimiterFor } from "../durable-objects/rate-limiter/limits";
import { ApiError } from "./api-error";
import type { AppContext } from "./context";

/**
 * `GET /healthz/hop`: `/healthz` plus one bare Durable Object call, the ceiling of any route that must call one
 * object before it answers (single-event ingest calls its accumulator). The bench compares ingest with it.
 *
 * It exists only where the Worker variable `BENCH_ROUTES` is "1", which the bench's `wrangler dev` sets and no
 * deployment does: anywhere else it is the 404 of an unknown path, so an unauthenticated caller cannot use it
 * to load objects. The object it calls is a rate limiter under a name no key has, asked for one request of a
 * limit it never reaches: in-memory work, nothing stored.
 */
export async function benchHop(c: AppContext) {
	if (c.env.BENCH_ROUTES !== "1") throw new ApiError("not_found", `No route ${c.req.method} ${c.req.path}.`);
	await rateLimiterFor(c.env, "bench:hop").lease(Number.MAX_SAFE_INTEGER, 1, null);
	return c.json({ status: "ok" });
}
