import { afterEach, describe, expect, it, vi } from "vitest";
import { MeteringClient } from "../src/client";
import { parseRetryAfter } from "../src/transport";
import type { DeliveryFailure, MeteringClientOptions } from "../src/types";
import { accept, apiError, fakeFetch, json, type SentRequest } from "./fake-fetch";

const clients: MeteringClient[] = [];
function client(fetch: typeof globalThis.fetch, options: Partial<MeteringClientOptions> = {}) {
	const failures: DeliveryFailure[] = [];
	const c = new MeteringClient({
		apiKey: "sk_test_abc",
		baseUrl: "http://metering.test/",
		fetch,
		minBackoffMs: 1,
		maxBackoffMs: 4,
		flushOnExit: false,
		onError: (failure) => failures.push(failure),
		...options,
	});
	clients.push(c);
	return { client: c, failures };
}

afterEach(async () => {
	vi.useRealTimers();
	await Promise.all(clients.splice(0).map((c) => c.shutdown()));
});

const keysOf = (requests: SentRequest[]) =>
	requests.flatMap((r) => r.body.events.map((e) => e.idempotency_key));

describe("MeteringClient batching", () => {
	it("sends full batches by size, the rest on flush, in the API's wire shape", async () => {
		const { fetch, requests } = fakeFetch();
		const { client: c, failures } = client(fetch, { batchSize: 500, flushIntervalMs: 60_000 });
		for (let i = 0; i < 1200; i++)
			c.action({ agentKey: "agent-1", type: "llm_call", metadata: { tokens: i } });
		await c.flush();
		expect(requests.map((r) => r.body.events.length)).toEqual([500, 500, 200]);
		const first = requests[0]!;
		expect(first.url).toBe("http://metering.test/v1/actions/batch");
		expect(first.headers.authorization).toBe("Bearer sk_test_abc");
		expect(first.headers["content-type"]).toBe("application/json");
		expect(first.body.events[3]).toEqual({
			agent_key: "agent-1",
			action_type: "llm_call",
			metadata: { tokens: 3 },
			timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			idempotency_key: expect.any(String),
		});
		// Every event has its own key, so that a batch sent again is recognised event by event.
		expect(new Set(keysOf(requests)).size).toBe(1200);
		expect(c.stats).toMatchObject({ pending: 0, processed: 1200, failed: 0, requests: 3 });
		expect(failures).toEqual([]);
	});

	it("sends a partial batch when the interval passes, without a flush", async () => {
		const { fetch, requests } = fakeFetch();
		const { client: c } = client(fetch, { flushIntervalMs: 30 });
		await c.outcome({ agentKey: "agent-1", type: "converted_lead", value: 12.5 });
		await c.outcome({ agentKey: "agent-1", type: "converted_lead", value: 0, idempotencyKey: "mine" });
		expect(requests).toHaveLength(0);
		await vi.waitFor(() => expect(requests).toHaveLength(1), { timeout: 2000 });
		expect(requests[0]!.url).toBe("http://metering.test/v1/outcomes/batch");
		expect(requests[0]!.body.events.map((e) => [e.outcome_type, e.value, e.idempotency_key])).toEqual([
			["converted_lead", 12.5, expect.any(String)],
			["converted_lead", 0, "mine"],
		]);
	});

	it("keeps the caller's timestamp (a Date or a string) and sends actions and outcomes to their endpoints", async () => {
		const { fetch, requests } = fakeFetch();
		const { client: c } = client(fetch);
		c.action({ agentKey: "a", type: "t", timestamp: new Date("2026-11-21T10:00:00Z") });
		c.outcome({ agentKey: "a", type: "o", value: 1, timestamp: "2026-11-21T11:00:00+01:00" });
		await c.flush();
		const byUrl = Object.fromEntries(requests.map((r) => [r.url.split("/v1/")[1], r.body.events[0]]));
		expect(byUrl["actions/batch"]?.timestamp).toBe("2026-11-21T10:00:00.000Z");
		expect(byUrl["outcomes/batch"]?.timestamp).toBe("2026-11-21T11:00:00+01:00");
	});

	it("refuses programmer errors at the call, and anything after shutdown", async () => {
		const { fetch } = fakeFetch();
		const { client: c } = client(fetch);
		expect(() => c.action({ agentKey: "", type: "x" })).toThrow(/agentKey/);
		expect(() => c.outcome({ agentKey: "a", type: "x", value: Number.NaN })).toThrow(/value/);
		await c.shutdown();
		expect(() => c.action({ agentKey: "a", type: "x" })).toThrow(/shut down/);
	});
});

describe("MeteringClient retries", () => {
	it("retries 5xx and network errors with the same idempotency keys, and reports nothing", async () => {
		const { fetch, requests } = fakeFetch((request, index) =>
			index === 0
				? apiError(503, "internal_error")
				: index === 1
					? new TypeError("fetch failed")
					: accept(request),
		);
		const { client: c, failures } = client(fetch);
		for (let i = 0; i < 3; i++) c.action({ agentKey: "a", type: "llm_call" });
		await c.flush();
		expect(requests).toHaveLength(3);
		expect(keysOf([requests[1]!])).toEqual(keysOf([requests[0]!]));
		expect(keysOf([requests[2]!])).toEqual(keysOf([requests[0]!]));
		expect(failures).toEqual([]);
		expect(c.stats).toMatchObject({ processed: 3, retries: 2, failed: 0, pending: 0 });
	});

	it("counts what the API already had as duplicates, not as new", async () => {
		const { fetch } = fakeFetch((request) =>
			json(200, {
				results: request.body.events.map(() => ({ status: "duplicate" })),
				processed: 0,
				duplicates: request.body.events.length,
			}),
		);
		const { client: c } = client(fetch);
		c.action({ agentKey: "a", type: "t", idempotencyKey: "k1" });
		await c.flush();
		expect(c.stats).toMatchObject({ processed: 0, duplicates: 1 });
	});

	it("waits at least Retry-After after a 429", async () => {
		const times: number[] = [];
		const { fetch } = fakeFetch((request, index) => {
			times.push(Date.now());
			return index === 0
				? new Response('{"error":{"code":"rate_limited","message":"slow down"}}', {
						status: 429,
						headers: { "Retry-After": "1" },
					})
				: accept(request);
		});
		const { client: c, failures } = client(fetch);
		c.action({ agentKey: "a", type: "t" });
		await c.flush();
		expect(times).toHaveLength(2);
		expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(990);
		expect(failures).toEqual([]);
	});

	it("backs off exponentially with jitter, capped, and never below Retry-After", () => {
		const { fetch } = fakeFetch();
		const { client: c } = client(fetch, { minBackoffMs: 100, maxBackoffMs: 1000 });
		const samples = (retry: number) => Array.from({ length: 200 }, () => c.backoff(retry));
		for (const [retry, ceiling] of [
			[1, 100],
			[2, 200],
			[3, 400],
			[5, 1000],
			[9, 1000],
		] as const) {
			const values = samples(retry);
			expect(Math.min(...values)).toBeGreaterThanOrEqual(ceiling / 2);
			expect(Math.max(...values)).toBeLessThanOrEqual(ceiling);
			expect(new Set(values).size).toBeGreaterThan(1);
		}
		for (let i = 0; i < 100; i++) expect(c.backoff(1, 5000)).toBeGreaterThanOrEqual(5000);
	});

	it("reports the events with retries_exhausted after maxRetries", async () => {
		const { fetch, requests } = fakeFetch(() => apiError(500, "internal_error"));
		const { client: c, failures } = client(fetch, { maxRetries: 3 });
		c.action({ agentKey: "a", type: "t", idempotencyKey: "k1" });
		c.action({ agentKey: "a", type: "t", idempotencyKey: "k2" });
		await c.flush();
		expect(requests).toHaveLength(4);
		expect(failures).toHaveLength(1);
		expect(failures[0]).toMatchObject({ reason: "retries_exhausted", status: 500, code: "internal_error" });
		expect(failures[0]!.events.map((e) => e.idempotencyKey)).toEqual(["k1", "k2"]);
		expect(c.stats).toMatchObject({ failed: 2, pending: 0 });
	});

	it("does not retry a 401: every event is reported as rejected", async () => {
		const { fetch, requests } = fakeFetch(() => apiError(401, "unauthorized"));
		const { client: c, failures } = client(fetch);
		c.action({ agentKey: "a", type: "t" });
		await c.flush();
		expect(requests).toHaveLength(1);
		expect(failures).toMatchObject([{ reason: "rejected", status: 401, code: "unauthorized" }]);
		expect(failures[0]!.events).toHaveLength(1);
	});

	it("reports the invalid events of a 400 and sends the rest of the batch again", async () => {
		const { fetch, requests } = fakeFetch((request, index) =>
			index === 0
				? apiError(400, "validation_error", [
						{ path: "events[1].metadata.cost", message: "cost must be a number ≥ 0" },
						{ path: "events[3].action_type", message: "must be 1–100 characters" },
					])
				: accept(request),
		);
		const { client: c, failures } = client(fetch);
		for (const key of ["k0", "k1", "k2", "k3"]) c.action({ agentKey: "a", type: "t", idempotencyKey: key });
		await c.flush();
		expect(requests).toHaveLength(2);
		expect(keysOf([requests[1]!])).toEqual(["k0", "k2"]);
		expect(failures.map((f) => [f.reason, f.events[0]!.idempotencyKey, f.details])).toEqual([
			["invalid", "k1", [{ path: "metadata.cost", message: "cost must be a number ≥ 0" }]],
			["invalid", "k3", [{ path: "action_type", message: "must be 1–100 characters" }]],
		]);
		expect(c.stats).toMatchObject({ processed: 2, failed: 2 });
	});

	it("splits a batch the API finds too large", async () => {
		const { fetch, requests } = fakeFetch((request) =>
			request.body.events.length > 2 ? apiError(413, "payload_too_large") : accept(request),
		);
		const { client: c, failures } = client(fetch);
		for (let i = 0; i < 7; i++) c.action({ agentKey: "a", type: "t" });
		await c.flush();
		expect(failures).toEqual([]);
		expect(c.stats.processed).toBe(7);
		const delivered = requests.filter((r) => r.body.events.length <= 2);
		expect(new Set(keysOf(delivered)).size).toBe(7);
	});

	it("reports a callback that throws without losing the events", async () => {
		const { fetch } = fakeFetch();
		const errors = vi.spyOn(console, "error").mockImplementation(() => {});
		const { client: c } = client(fetch, {
			onDelivered: () => {
				throw new Error("user bug");
			},
		});
		c.action({ agentKey: "a", type: "t" });
		await c.flush();
		expect(c.stats).toMatchObject({ processed: 1, pending: 0 });
		expect(errors).toHaveBeenCalled();
		errors.mockRestore();
	});
});

describe("MeteringClient back-pressure and shutdown", () => {
	it("makes callers wait when the buffer is full, and loses none of them", async () => {
		const gates: (() => void)[] = [];
		const { fetch, requests } = fakeFetch(
			(request) => new Promise<Response>((resolve) => gates.push(() => resolve(accept(request)))),
		);
		const { client: c } = client(fetch, { batchSize: 2, maxBufferedEvents: 4, maxConcurrentRequests: 1 });
		const calls = Array.from({ length: 7 }, (_, i) => {
			let done = false;
			const promise = c.action({ agentKey: "a", type: "t", idempotencyKey: `k${i}` }).then(() => {
				done = true;
			});
			return { promise, done: () => done };
		});
		await new Promise((r) => setTimeout(r, 10));
		// 4 held (2 in flight, 2 queued): the other 3 callers wait.
		expect(calls.map((call) => call.done())).toEqual([true, true, true, true, false, false, false]);
		expect(c.stats.pending).toBe(7);
		const flushed = c.flush();
		while (requests.length < 4 || gates.length > 0) {
			gates.shift()?.();
			await new Promise((r) => setTimeout(r, 1));
		}
		await flushed;
		await Promise.all(calls.map((call) => call.promise));
		expect(keysOf(requests)).toEqual(["k0", "k1", "k2", "k3", "k4", "k5", "k6"]);
		expect(c.stats).toMatchObject({ pending: 0, processed: 7 });
	});

	it("flush waits for events still being retried; shutdown loses nothing", async () => {
		const { fetch, requests } = fakeFetch((request, index) =>
			index < 3 ? apiError(503, "internal_error") : accept(request),
		);
		const { client: c, failures } = client(fetch, { batchSize: 10, flushIntervalMs: 60_000 });
		for (let i = 0; i < 25; i++) c.outcome({ agentKey: "a", type: "o", value: i });
		await c.shutdown();
		expect(c.stats).toMatchObject({ pending: 0, processed: 25, failed: 0 });
		expect(failures).toEqual([]);
		const delivered = requests.slice(3);
		expect(
			delivered.flatMap((r) => r.body.events.map((e) => e.value)).sort((a, b) => Number(a) - Number(b)),
		).toEqual(Array.from({ length: 25 }, (_, i) => i));
	});

	it("resolves a flush with nothing buffered at once", async () => {
		const { fetch, requests } = fakeFetch();
		const { client: c } = client(fetch);
		await c.flush();
		expect(requests).toHaveLength(0);
	});
});

describe("parseRetryAfter", () => {
	it("reads seconds and HTTP dates", () => {
		expect(parseRetryAfter("7")).toBe(7000);
		expect(parseRetryAfter(null)).toBeUndefined();
		expect(parseRetryAfter("soon")).toBeUndefined();
		const now = Date.parse("2026-11-21T10:00:00Z");
		expect(parseRetryAfter("Sat, 21 Nov 2026 10:00:05 GMT", now)).toBe(5000);
	});
});
