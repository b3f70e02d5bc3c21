import type { Env } from "../../env";
import type { Principal } from "../../http/auth";
import { admit, forgetLeases } from "./lease";
import type { RateLimitDecision } from "./object";

export function limitFor(principal: Principal, env: Env): number {
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
	principal: Principal,
	waitUntil?: (work: Promise<unknown>) => void,
): Promise<RateLimitDecision> {
	return admit(
		principal.keyId,
		limitFor(principal, env),
		(limit, want, returned) => rateLimiterFor(env, principal.keyId).lease(limit, want, returned),
		Date.now(),
		waitUntil,
	);
}

export async function revokeInRateLimiter(env: Env, keyId: string): Promise<void> {
	forgetLeases(keyId);
	await rateLimiterFor(env, keyId).revoke();
}
