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

/** A decision that may also hand the caller requests to admit by itself (lease.ts). */
export interface RateLimitLease extends RateLimitDecision {
	/** Requests counted for the caller: this one and `granted - 1` more it may admit without asking. */
	granted: number;
	/** Epoch milliseconds at which the window began; a returned lease names it. */
	windowStart: number;
}

/** Unused requests of an earlier lease, given back so that they count for nobody. */
export interface ReturnedLease {
	windowStart: number;
	count: number;
}

const WINDOW_MS = 60_000;

/**
 * One per key: a fixed 60-second window counter kept in memory (the object is single-threaded, so counting
 * needs no storage round trip), and the key's revocation, kept in storage so that it survives eviction.
 *
 * Requests are counted before they are admitted: a lease of n counts n at once, so however many isolates
 * hold leases, no more than the limit is ever admitted in a window.
 */
declare module "../../env" {
	interface BoundClasses {
		RATE_LIMITER: RateLimiter;
	}
}

export class RateLimiter extends DurableObject<Env> {
	private windowStart = 0;
	private count = 0;
	private revoked: boolean;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.revoked = ctx.storage.kv.get<boolean>("revoked") === true;
	}

	/**
	 * Counts this request and up to `want - 1` more for the caller to admit itself. A request over the limit
	 * still counts (docs/keys-and-environments.md#rate-limits: every authenticated request does) and is refused.
	 */
	lease(limit: number, want: number, returned: ReturnedLease | null, now = Date.now()): RateLimitLease {
		const windowStart = now - (now % WINDOW_MS);
		if (windowStart !== this.windowStart) {
			this.windowStart = windowStart;
			this.count = 0;
		}
		const reset = (windowStart + WINDOW_MS) / 1000;
		if (this.revoked) {
			return { allowed: false, revoked: true, limit, remaining: 0, reset, granted: 0, windowStart };
		}
		if (returned !== null && returned.windowStart === windowStart && returned.count > 0) {
			this.count = Math.max(0, this.count - returned.count);
		}
		const granted = Math.max(0, Math.min(Math.floor(want), limit - this.count));
		this.count += Math.max(granted, 1);
		return {
			allowed: granted > 0,
			revoked: false,
			limit,
			remaining: Math.max(0, limit - this.count),
			reset,
			granted,
			windowStart,
		};
	}

	revoke(): void {
		this.revoked = true;
		this.ctx.storage.kv.put("revoked", true);
	}
}
