import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { admit, type Lessor, leaseSize } from "../../src/durable-objects/rate-limiter/lease";
import type { RateLimitLease, ReturnedLease } from "../../src/durable-objects/rate-limiter/object";
import { newId } from "../../src/lib/ids";
import { createKey, del, get, post } from "../helpers";

/** The key's real RateLimiter, with a count of the calls that reached it. */
function countedLessor(keyId: string) {
	const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyId));
	const calls = { count: 0 };
	const lessor: Lessor = (limit: number, want: number, returned: ReturnedLease | null) => {
		calls.count++;
		return stub.lease(limit, want, returned) as Promise<RateLimitLease>;
	};
	return { lessor, calls };
}

/**
 * Requests of one key spread over simulated seconds (`perSecond` each, concurrent), as one isolate would see
 * them; with `refills`, leases are refilled in the background (the requests' waitUntil), and what was started in
 * a second is done before the next.
 */
async function drive(
	keyId: string,
	limit: number,
	perSecond: number[],
	lessor: Lessor,
	start: number,
	refills = false,
) {
	const decisions = [];
	const background: Promise<unknown>[] = [];
	const waitUntil = refills ? (work: Promise<unknown>) => background.push(work) : undefined;
	for (const [second, requests] of perSecond.entries()) {
		const now = start + second * 1000;
		decisions.push(
			...(await Promise.all(
				Array.from({ length: requests }, () => admit(keyId, limit, lessor, now, waitUntil)),
			)),
		);
		await Promise.all(background.splice(0));
	}
	return decisions;
}

/** Simulated time inside the object's current window, so that its window and ours agree. */
function windowStartNow(): number {
	const now = Date.now();
	return now - (now % 60_000) + 100;
}

describe("rate-limit leases", () => {
	// The object counts in real 60-second windows: a test must not straddle two. Waiting for the next one takes up
	// to 15 s, longer than the default hook timeout.
	beforeEach(async () => {
		const intoWindow = Date.now() % 60_000;
		if (intoWindow > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 50));
	}, 20_000);

	it("sizes a lease by the isolate's recent rate, within 1/200 of the limit", () => {
		expect(leaseSize(0, 10_000)).toBe(1);
		expect(leaseSize(3, 10_000)).toBe(1);
		expect(leaseSize(400, 10_000)).toBe(50);
		expect(leaseSize(100_000, 10_000)).toBe(50);
		expect(leaseSize(100_000, 100)).toBe(1);
	});

	it("lets a busy isolate skip the object for most requests, with remaining falling by one per request", async () => {
		const keyId = newId("key");
		const { lessor, calls } = countedLessor(keyId);
		const start = windowStartNow();
		const decisions = [];
		// Sequential requests, 400 in each of three simulated seconds.
		for (let second = 0; second < 3; second++) {
			for (let i = 0; i < 400; i++) decisions.push(await admit(keyId, 10_000, lessor, start + second * 1000));
		}
		expect(decisions.every((d) => d.allowed)).toBe(true);
		expect(decisions.map((d) => d.remaining)).toEqual(decisions.map((_, i) => 10_000 - i - 1));
		// In the first second, leases grow with the requests seen so far (a quarter of them: 1, 1, 1, 1, 2, 2, 3 …
		// up to 50), 24 calls for its 400; later seconds lease 50 at a time, 8 calls each.
		expect(calls.count).toBe(24 + 2 * 8);
	});

	it("refills a half-used lease in the background, so a busy isolate's requests do not wait for the object", async () => {
		const keyId = newId("key");
		const { lessor, calls } = countedLessor(keyId);
		const start = windowStartNow();
		const decisions = [];
		let refills = 0;
		// Sequential requests, 400 in each of three simulated seconds; a refill lands before the next request.
		for (let second = 0; second < 3; second++) {
			for (let i = 0; i < 400; i++) {
				const started: Promise<unknown>[] = [];
				decisions.push(
					await admit(keyId, 10_000, lessor, start + second * 1000, (work) => started.push(work)),
				);
				refills += started.length;
				await Promise.all(started);
			}
		}
		expect(decisions.every((d) => d.allowed)).toBe(true);
		expect(decisions.map((d) => d.remaining)).toEqual(decisions.map((_, i) => 10_000 - i - 1));
		// The first second asks the object itself until the requests seen so far make a lease of two (the fifth);
		// after that, and in later seconds, a request waits for the object only when the leases it held expired
		// (once per simulated second). Every other lease came as a refill. What expired is given back, and the
		// remaining above stays exact across it.
		expect(calls.count - refills).toBe(5 + 2);
		expect(refills).toBeGreaterThanOrEqual((2 * 400) / 50 - 2);
	});

	it("never admits more than the limit, however requests arrive and leases expire", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 1, max: 3000 }),
				fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 5 }),
				fc.boolean(),
				async (limit, perSecond, refills) => {
					const keyId = newId("key");
					const { lessor } = countedLessor(keyId);
					const decisions = await drive(keyId, limit, perSecond, lessor, windowStartNow(), refills);
					const admitted = decisions.filter((d) => d.allowed).length;
					const sent = perSecond.reduce((a, b) => a + b, 0);
					// Never more than the limit. Fewer only by what the isolate strands, left unused when its own
					// concurrent requests were refused meanwhile and no later call gave it back: under one lease, or
					// under two with refills (the rest of a lease and the refill that followed it).
					const lease = Math.max(1, Math.floor(limit / 200));
					expect(admitted).toBeLessThanOrEqual(Math.min(sent, limit));
					expect(admitted).toBeGreaterThanOrEqual(
						Math.min(sent, limit) - (refills ? 2 * lease - 1 : lease - 1),
					);
					for (const d of decisions) expect(d.remaining).toBeGreaterThanOrEqual(0);
				},
			),
			{ numRuns: 15 },
		);
	});

	it("two isolates sharing a key admit no more than the limit together", async () => {
		const keyId = newId("key");
		const { lessor } = countedLessor(keyId);
		const start = windowStartNow();
		// The second "isolate" is the same module under another pool name pointing at the same object.
		const other: Lessor = lessor;
		const a = drive(keyId, 500, [200, 300, 300], lessor, start);
		const b = drive(`${keyId}#other-isolate`, 500, [200, 300, 300], other, start);
		const admitted = [...(await a), ...(await b)].filter((d) => d.allowed).length;
		expect(admitted).toBeLessThanOrEqual(500);
		// What an isolate strands is at most one lease (1/200 of the limit, at least 1).
		expect(admitted).toBeGreaterThanOrEqual(500 - 2 * Math.max(1, 500 / 200));
	});

	it("answers 401 at once in this isolate after the key is revoked, leases or not", async () => {
		const admin = await createKey("admin");
		const created = await post("/v1/api-keys", { type: "api", permission: "read-only" }, { key: admin });
		const key = created.body.key as string;
		for (let i = 0; i < 5; i++) expect((await get("/v1/agents", { key })).status).toBe(200);
		expect((await del(`/v1/api-keys/${created.body.id}`, { key: admin })).status).toBe(204);
		expect((await get("/v1/agents", { key })).status).toBe(401);
	});
});
