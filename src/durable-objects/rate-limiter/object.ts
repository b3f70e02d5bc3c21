import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

export interface RateLimitDecision {
	allowed: boolean;
	revoked: boolean;
	limit: number;
	remaining: number;
	/** Unix epoch seconds at which the current window ends. */
	reset: number;
}

const WINDOW_MS = 60_000;

/**
 * One per key: a fixed 60-second window counter kept in memory (the object is single-threaded, so counting
 * needs no storage round trip), and the key's revocation, kept in storage so that it survives eviction.
 */
export class RateLimiter extends DurableObject<Env> {
	private windowStart = 0;
	private count = 0;
	private revoked: boolean;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.revoked = ctx.storage.kv.get<boolean>("revoked") === true;
	}

	hit(limit: number, now = Date.now()): RateLimitDecision {
		const windowStart = now - (now % WINDOW_MS);
		if (windowStart !== this.windowStart) {
			this.windowStart = windowStart;
			this.count = 0;
		}
		const reset = (windowStart + WINDOW_MS) / 1000;
		if (this.revoked) return { allowed: false, revoked: true, limit, remaining: 0, reset };
		this.count++;
		return {
			allowed: this.count <= limit,
			revoked: false,
			limit,
			remaining: Math.max(0, limit - this.count),
			reset,
		};
	}

	revoke(): void {
		this.revoked = true;
		this.ctx.storage.kv.put("revoked", true);
	}
}
