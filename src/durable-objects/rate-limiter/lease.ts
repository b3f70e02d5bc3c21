/**
 * Rate-limit leases: an isolate that serves many requests of one key asks the key's RateLimiter for several
 * requests at once and admits the rest of them itself, so most requests skip the object hop.
 *
 * Why the limit still holds: the object counts a lease in full when it grants it, so isolates together never
 * admit more than the limit in a window. What a lease costs instead is under-admission: requests leased to an
 * isolate that then goes quiet count for nobody else. They are given back with the isolate's next lease call in
 * the same window, so only an isolate that never asks again strands them — what it holds, under two leases
 * (2 × MAX_LEASE_SHARE of the limit), per isolate per window.
 *
 * Once half of a lease is used, the isolate asks for the next one in the background (a refill, kept alive by the
 * request's waitUntil), so a busy isolate's requests do not wait for the object when a lease runs out. Should the
 * pool still run dry while a lease call is in flight, the requests meanwhile ask for one each.
 *
 * What the headers say: X-RateLimit-Remaining is what the object had left after its last grant to this isolate
 * plus what this isolate still holds, so one isolate sees its remaining fall by one per request, as without
 * leases; requests leased to other isolates count as used.
 *
 * Leases are small while a key is quiet (one request: every request asks the object, as before) and grow with
 * the rate this isolate sees, to about LEASE_HORIZON_MS of its traffic. The rate is the last second's requests,
 * or this second's so far when they are more: a key that turns busy leases within its first second, instead of
 * asking the object for every request of that second. A lease lives LEASE_TTL_MS from the isolate's last lease
 * call, which also bounds how long another isolate keeps admitting a revoked key (this isolate forgets its
 * leases at once).
 */
import type { RateLimitDecision, RateLimitLease, ReturnedLease } from "./object";

const LEASE_TTL_MS = 1_000;
const LEASE_HORIZON_MS = 250;
const MAX_LEASE_SHARE = 1 / 200;
const MAX_POOLS = 10_000;

interface Pool {
	limit: number;
	windowStart: number;
	reset: number;
	/** Requests leased to this isolate and not yet admitted. */
	left: number;
	/** The size of the last lease granted: a refill is asked for once half of it is used. */
	granted: number;
	/** What the object had left after its last grant to this isolate, in this window. */
	objectRemaining: number;
	expires: number;
	/**
	 * When this isolate's lease call in flight was sent (0: none). Requests arriving meanwhile ask for one:
	 * otherwise each of a burst of concurrent requests would lease many, and all but one lease would wait unused.
	 */
	leasing: number;
	/** Requests seen in the current second, and in the one before (the rate that sizes the next lease). */
	second: number;
	thisSecond: number;
	lastSecond: number;
}

export type Lessor = (limit: number, want: number, returned: ReturnedLease | null) => Promise<RateLimitLease>;

const pools = new Map<string, Pool>();

/** The size of the next lease: a quarter second of this isolate's recent traffic, within the share cap. */
export function leaseSize(requestsLastSecond: number, limit: number): number {
	const cap = Math.max(1, Math.floor(limit * MAX_LEASE_SHARE));
	return Math.min(cap, Math.max(1, Math.ceil((requestsLastSecond * LEASE_HORIZON_MS) / 1000)));
}

/** Requests a second this isolate sees of the key: the last second's, or this second's so far if more. */
function recentRate(pool: Pool): number {
	return Math.max(pool.lastSecond, pool.thisSecond);
}

function observe(pool: Pool, now: number): void {
	const second = Math.floor(now / 1000);
	if (second !== pool.second) {
		pool.lastSecond = second === pool.second + 1 ? pool.thisSecond : 0;
		pool.thisSecond = 0;
		pool.second = second;
	}
	pool.thisSecond++;
}

function poolOf(keyId: string, limit: number, now: number): Pool {
	let pool = pools.get(keyId);
	if (pool === undefined || pool.limit !== limit) {
		if (pool === undefined && pools.size >= MAX_POOLS) {
			const oldest = pools.keys().next().value;
			if (oldest !== undefined) pools.delete(oldest);
		}
		pool = {
			limit,
			windowStart: 0,
			reset: 0,
			left: 0,
			granted: 0,
			objectRemaining: 0,
			expires: 0,
			leasing: 0,
			second: Math.floor(now / 1000),
			thisSecond: 0,
			lastSecond: 0,
		};
		pools.set(keyId, pool);
	}
	return pool;
}

/**
 * Counts one request of `keyId`, from this isolate's lease when it holds one, else through `lessor`. With
 * `background` (the request's waitUntil), a lease half used is refilled without the request waiting for it.
 */
export async function admit(
	keyId: string,
	limit: number,
	lessor: Lessor,
	now = Date.now(),
	background?: (work: Promise<unknown>) => void,
): Promise<RateLimitDecision> {
	const pool = poolOf(keyId, limit, now);
	observe(pool, now);
	if (pool.left > 0 && now < pool.expires && now < pool.reset * 1000) {
		pool.left--;
		const decision = {
			allowed: true,
			revoked: false,
			limit,
			remaining: pool.objectRemaining + pool.left,
			reset: pool.reset,
		};
		if (background !== undefined && pool.leasing === 0 && pool.left <= pool.granted / 2) {
			const want = leaseSize(recentRate(pool), limit);
			if (want > 1) background(refill(keyId, pool, lessor, want, now));
		}
		return decision;
	}
	const returned = pool.left > 0 ? { windowStart: pool.windowStart, count: pool.left } : null;
	pool.left = 0;
	const concurrent = pool.leasing !== 0 && now - pool.leasing < LEASE_TTL_MS;
	const want = concurrent ? 1 : leaseSize(recentRate(pool), limit);
	if (want > 1) pool.leasing = now;
	let lease: RateLimitLease;
	try {
		lease = await lessor(limit, want, returned);
	} finally {
		if (want > 1) pool.leasing = 0;
	}
	if (lease.revoked) {
		pools.delete(keyId);
		return lease;
	}
	// What this call gave back is the object's again: its remaining went up by as much before this grant.
	if (returned !== null && lease.windowStart === returned.windowStart) pool.objectRemaining += returned.count;
	// This request takes one of what was granted.
	addLease(pool, lease, lease.granted - 1, now);
	return {
		allowed: lease.allowed,
		revoked: false,
		limit,
		remaining: pool.objectRemaining + pool.left,
		reset: lease.reset,
	};
}

/** The next lease, asked for while the pool still holds some: all of it goes to the pool. */
async function refill(keyId: string, pool: Pool, lessor: Lessor, want: number, now: number): Promise<void> {
	pool.leasing = now;
	try {
		const lease = await lessor(pool.limit, want, null);
		if (lease.revoked) pools.delete(keyId);
		else addLease(pool, lease, lease.granted, now);
	} catch (error) {
		// Nothing is lost: the request that finds the pool empty asks the object itself.
		console.error(JSON.stringify({ at: "rate-limit.refill", error: String(error) }));
	} finally {
		pool.leasing = 0;
	}
}

/** Adds `count` of a granted lease to the pool; a lease of a new window replaces what the pool held. */
function addLease(pool: Pool, lease: RateLimitLease, count: number, now: number): void {
	if (lease.windowStart !== pool.windowStart) {
		pool.windowStart = lease.windowStart;
		pool.reset = lease.reset;
		pool.left = 0;
		pool.objectRemaining = lease.remaining;
	} else {
		// Concurrent calls of this isolate may answer out of order: the smallest remaining is the latest.
		pool.objectRemaining = Math.min(pool.objectRemaining, lease.remaining);
	}
	if (count > 0) {
		pool.left += count;
		pool.granted = lease.granted;
		pool.expires = now + LEASE_TTL_MS;
	}
}

/** A revoked key's leases in this isolate end at once; other isolates' end within LEASE_TTL_MS. */
export function forgetLeases(keyId: string): void {
	pools.delete(keyId);
}
