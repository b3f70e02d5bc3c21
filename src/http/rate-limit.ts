import type { RateLimitDecision } from "../durable-objects/rate-limiter/object";
import { ApiError } from "./api-error";

/**
 * Answers a counted request's rate-limit decision, the same for the /v1 gate and the portal gate: the
 * `X-RateLimit-*` headers on the response, and when the limit is reached a 429 that carries them too, with
 * `Retry-After` (whole seconds, at least 1).
 */
export function applyRateLimit(
	c: { header: (name: string, value: string) => void },
	decision: RateLimitDecision,
) {
	const limitHeaders = {
		"X-RateLimit-Limit": String(decision.limit),
		"X-RateLimit-Remaining": String(decision.remaining),
		"X-RateLimit-Reset": String(decision.reset),
	};
	for (const [name, value] of Object.entries(limitHeaders)) c.header(name, value);
	if (!decision.allowed) {
		const retryAfter = Math.max(1, Math.ceil(decision.reset - Date.now() / 1000));
		throw new ApiError("rate_limited", `Rate limit of ${decision.limit} requests per minute exceeded.`, {
			headers: { ...limitHeaders, "Retry-After": String(retryAfter) },
		});
	}
}
