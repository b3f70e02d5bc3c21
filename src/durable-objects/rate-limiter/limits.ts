import type { Env } from "../../env";
import { admit, forgetLeases } from "./lease";
import type { RateLimitDecision } from "./object";

/** What the limiter needs of a caller (http/auth.ts: Principal): its kind, and the key its requests count against. */
export interface LimitedCaller {
	type: "sdk" | "api";
	keyId: string;
}

/** Requests per minute of a kind of caller; customer portal sessions count like API keys. */
export function limitFor(principal: Pick<LimitedCaller, "type">, env: Env): number {
	const configured = principal.type === "sdk" ? env.RATE_LIMIT_SDK_PER_MINUTE : env.RATE_LIMIT_API_PER_MINUTE;
	const fallback = principal.type === "sdk" ? 10_000 : 1_000;
	const parsed = Number(configured);
	return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
}

export function rateLimiterFor(env: Env, keyId: string) {
	return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyId));
}

/**
 * Counts a request against its key's limit; most requests of a busy key are admitted from a lease (lease.ts),
 * refilled in the background through `waitUntil`.
 */
export async function countRequest(
	env: Env,
	principal: LimitedCaller,
	waitUntil?: (work: Promise<unknown>) => void,
): Promise<RateLimitDecision> {
	return countRequestOf(env, principal.keyId, limitFor(principal, env), waitUntil);
}

/** Counts a request against the limiter named `id` (a key's id, or a portal session's). */
export async function countRequestOf(
	env: Env,
	id: string,
	limit: number,
	waitUntil?: (work: Promise<unknown>) => void,
): Promise<RateLimitDecision> {
	return admit(
		id,
		limit,
		(limit, want, returned) => rateLimiterFor(env, id).lease(limit, want, returned),
		Date.now(),
		waitUntil,
	);
}

export async function revokeInRateLimiter(env: Env, keyId: string): Promise<void> {
	forgetLeases(keyId);
	await rateLimiterFor(env, keyId).revoke();
}
