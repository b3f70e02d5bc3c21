// The built SDK (dist/) against a real `wrangler dev`: 10,000 events with the server killed (kill -9) and restarted
// on the same state in the middle, each counted exactly once; a 429 storm backed off and completed; shutdown()
// losing nothing. Run by scripts/test-sdks.sh (node --test), after npm run build:sdk.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { BudgetExceededError, MeteringApiError, MeteringClient, withReservation } from "../../dist/index.js";
import { startWorker } from "./worker.mjs";

const unique = (name) => `${name}-${randomBytes(4).toString("hex")}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function recordingClient(worker, sdkKey, options = {}) {
	const failures = [];
	let delivered = 0;
	const client = new MeteringClient({
		apiKey: sdkKey,
		baseUrl: worker.base,
		flushOnExit: false,
		onError: (failure) => failures.push(failure),
		onDelivered: (report) => {
			delivered += report.events.length;
		},
		...options,
	});
	return { client, failures, delivered: () => delivered };
}

describe("TypeScript SDK against wrangler dev", { concurrency: false }, () => {
	let worker;
	let sdkKey;
	before(async () => {
		worker = await startWorker();
		sdkKey = await worker.sdkKey();
	});
	after(async () => {
		await worker?.stop();
	});

	it("counts 10,000 events exactly once across a kill -9 and restart of the server", async () => {
		const agentKey = unique("ts-crash");
		// The server is killed (kill -9) right after it recorded the 40th batch (of about 100), and that answer is
		// lost on the way: the client cannot know the batch was recorded, sends it again once the server is back,
		// and the idempotency keys make the server answer "duplicate" instead of counting it twice.
		let requests = 0;
		let restarted;
		const fetchThenCrash = async (url, init) => {
			const response = await fetch(url, init);
			if (++requests === 40) {
				await worker.crash();
				restarted = sleep(500).then(() => worker.restart());
				throw new TypeError("fetch failed: the server died before its answer arrived");
			}
			return response;
		};
		const { client, failures } = recordingClient(worker, sdkKey, {
			fetch: fetchThenCrash,
			batchSize: 100,
			maxBufferedEvents: 1000,
			maxConcurrentRequests: 2,
			flushIntervalMs: 50,
			minBackoffMs: 100,
			maxBackoffMs: 2000,
			maxRetries: 200,
			requestTimeoutMs: 15_000,
		});
		const start = Date.now();
		for (let i = 0; i < 10_000; i++) {
			// Outcomes every fourth event, with values whose sum is known.
			if (i % 4 === 3) await client.outcome({ agentKey, type: "task_done", value: i % 10 });
			else await client.action({ agentKey, type: "llm_call", metadata: { tokens: 10 } });
		}
		await client.flush();
		assert.ok(restarted, "the server was killed in the middle");
		await restarted;
		await client.shutdown();
		const stats = client.stats;
		console.log(
			`# 10,000 events across a crash in ${Date.now() - start} ms: ${stats.requests} requests, ${stats.retries} retries, ${stats.duplicates} answered duplicate`,
		);
		assert.deepEqual(failures, []);
		assert.equal(stats.failed, 0);
		assert.equal(stats.processed + stats.duplicates, 10_000);
		assert.ok(stats.retries > 0, "the crash made the client retry");
		assert.ok(stats.duplicates >= 100, "the batch whose answer was lost was answered duplicate");
		const usage = await worker.usage(agentKey);
		assert.equal(usage["action:llm_call"]?.count, 7500);
		assert.equal(usage["outcome:task_done"]?.count, 2500);
		// Outcome i has value i % 10 for i = 3, 7, 11, …: the values cycle 3, 7, 1, 5, 9 (sum 25 per 5).
		assert.equal(usage["outcome:task_done"]?.value, (2500 / 5) * 25);
	});

	it("loses nothing on shutdown(), with events still buffered and a long interval", async () => {
		const agentKey = unique("ts-shutdown");
		const { client, failures } = recordingClient(worker, sdkKey, {
			batchSize: 1000,
			flushIntervalMs: 3_600_000,
		});
		for (let i = 0; i < 2500; i++) client.action({ agentKey, type: "tool_call" });
		assert.ok(client.stats.pending > 0);
		await client.shutdown();
		assert.deepEqual(failures, []);
		assert.equal(client.stats.pending, 0);
		assert.equal((await worker.usage(agentKey))["action:tool_call"]?.count, 2500);
	});

	it("counts events sent again with the same idempotency keys once (what a retry after a crash does)", async () => {
		const agentKey = unique("ts-again");
		const send = async () => {
			const { client, failures } = recordingClient(worker, sdkKey);
			for (let i = 0; i < 300; i++)
				client.action({ agentKey, type: "llm_call", idempotencyKey: `run-7-step-${i}` });
			await client.shutdown();
			assert.deepEqual(failures, []);
			return client.stats;
		};
		assert.deepEqual([(await send()).processed, (await send()).duplicates], [300, 300]);
		assert.equal((await worker.usage(agentKey))["action:llm_call"]?.count, 300);
	});

	it("reports an invalid event and records the rest of its batch", async () => {
		const agentKey = unique("ts-invalid");
		const { client, failures } = recordingClient(worker, sdkKey);
		client.action({ agentKey, type: "llm_call", idempotencyKey: "ok-1" });
		client.action({ agentKey, type: "llm_call", metadata: { cost: -1 }, idempotencyKey: "bad" });
		client.action({ agentKey, type: "llm_call", idempotencyKey: "ok-2" });
		await client.shutdown();
		assert.equal(failures.length, 1);
		assert.equal(failures[0].reason, "invalid");
		assert.deepEqual(
			failures[0].events.map((e) => e.idempotencyKey),
			["bad"],
		);
		assert.match(failures[0].message, /cost/);
		assert.equal((await worker.usage(agentKey))["action:llm_call"]?.count, 2);
	});

	it("reserves a budget, is refused over it, settles by the event and releases on error", async () => {
		const agentKey = unique("ts-budget");
		const calls = { metric: "calls", source: { kind: "action", type: "llm_call", aggregate: "count" } };
		const plan = await worker.admin("POST", "/v1/pricing/rate-plans", {
			name: "Calls",
			base_fee: 10,
			charges: [{ ...calls, model: "per_unit", unit_price: 0.01 }],
		});
		const account = await worker.admin("POST", "/v1/accounts", { name: "Budget", email: "b@example.test" });
		const subscription = await worker.admin("POST", "/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [agentKey],
		});
		await worker.admin("POST", "/v1/alerts", {
			subscription_id: subscription.id,
			threshold: 11,
			block: true,
		});
		const { client, failures } = recordingClient(worker, sdkKey);
		let id;
		await withReservation({ client, agentKey, estimate: 0.6, ttlSeconds: 60 }, async (reservation) => {
			id = reservation.id;
			const over = await client.reserve({ agentKey, amount: 0.5 }).catch((error) => error);
			assert.ok(over instanceof BudgetExceededError);
			assert.equal(over.details[0].held, 0.6);
			await client.action({ agentKey, type: "llm_call", metadata: { reservation_id: reservation.id } });
		});
		await client.flush();
		assert.equal((await client.getReservation(id)).status, "settled");
		await assert.rejects(
			withReservation({ client, agentKey, estimate: 0.5 }, async (reservation) => {
				id = reservation.id;
				throw new Error("model down");
			}),
			/model down/,
		);
		assert.equal((await client.getReservation(id)).status, "released");
		const twice = await client.release(id).catch((error) => error);
		assert.ok(twice instanceof MeteringApiError);
		assert.equal(twice.code, "conflict");
		await client.shutdown();
		assert.deepEqual(failures, []);
	});
});

describe("TypeScript SDK in a 429 storm", () => {
	let worker;
	before(async () => {
		worker = await startWorker({ RATE_LIMIT_SDK_PER_MINUTE: "5" });
	});
	after(async () => {
		await worker?.stop();
	});

	it("backs off as Retry-After says and completes", async () => {
		const sdkKey = await worker.sdkKey();
		const agentKey = unique("ts-storm");
		const { client, failures } = recordingClient(worker, sdkKey, {
			batchSize: 100,
			maxConcurrentRequests: 2,
			minBackoffMs: 100,
		});
		// The limiter counts in fixed minutes: start early enough in one that the first 6 of the 10 requests fall in
		// it, so that the sixth at least is refused, and every refused one waits for the next minute (Retry-After).
		if (Date.now() % 60_000 > 45_000) await sleep(60_100 - (Date.now() % 60_000));
		const start = Date.now();
		for (let i = 0; i < 1000; i++) client.action({ agentKey, type: "llm_call" });
		await client.shutdown();
		const stats = client.stats;
		console.log(
			`# 1,000 events at 5 requests a minute in ${Date.now() - start} ms, ${stats.retries} retries`,
		);
		assert.deepEqual(failures, []);
		assert.ok(stats.retries >= 1, "requests were refused with 429");
		assert.ok(Date.now() - start >= 1000 * (60 - 46), "and waited for the next minute");
		assert.equal(stats.processed, 1000);
		assert.equal((await worker.usage(agentKey))["action:llm_call"]?.count, 1000);
	});
});
