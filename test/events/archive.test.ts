/**
 * The R2 archive (§15): layout and content, completeness after failed writes and retries, ingest never blocked
 * by a failing archive, and GET /v1/events/export streaming a day.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import { createKey, expectError, get, post } from "../helpers";
import {
	instanceAccumulator,
	sendAction,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";
import { archivedEvents, archiveKeys, readArchiveObject } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;

/** The export's lines, parsed (the JSON helper would read a one-line answer as one object). */
async function exportLines(date: string, key?: string) {
	const response = await get(`/v1/events/export?date=${date}`, key === undefined ? {} : { key });
	expect(response.status).toBe(200);
	expect(response.headers.get("Content-Type")).toContain("application/x-ndjson");
	if (response.body === null) return [];
	if (typeof response.body !== "string") return [response.body];
	return response.body
		.split("\n")
		.filter((line: string) => line !== "")
		.map((line: string) => JSON.parse(line));
}

type Stub = ReturnType<typeof subscriptionAccumulator>;

async function configure(
	stub: Stub,
	change: (instance: UsageAccumulator, state: DurableObjectState) => void = () => {},
) {
	await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
		instance.settings.flushDelayMs = 60_000;
		change(instance, state);
	});
}

describe("the events archive", () => {
	it("writes gzip NDJSON per day under events/<environment>/<day>/<accumulator>/<first event id>.ndjson.gz", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const stub = subscriptionAccumulator(subscription.id);
		await configure(stub);
		const yesterday = new Date(Date.now() - DAY).toISOString();
		const a = await sendAction({ agent_key: agentKey, timestamp: yesterday, metadata: { tokens: 5 } });
		const b = await sendOutcome({ agent_key: agentKey, value: 2.5 });
		const c = await sendAction({ agent_key: agentKey });
		expect(await stub.flush()).toMatchObject({ events: 3, archiveFailed: false, complete: true });

		const name = `live:sub:${subscription.id}`;
		const keysOf = (await archiveKeys("events/live/")).filter((key) => key.includes(`/${name}/`)).sort();
		expect(keysOf).toEqual(
			[
				`events/live/${yesterday.slice(0, 10)}/${name}/${a.body.id}.ndjson.gz`,
				`events/live/${b.body.timestamp.slice(0, 10)}/${name}/${b.body.id}.ndjson.gz`,
			].sort(),
		);
		const today = await readArchiveObject(
			`events/live/${b.body.timestamp.slice(0, 10)}/${name}/${b.body.id}.ndjson.gz`,
		);
		expect(today).toEqual([
			{
				id: b.body.id,
				kind: "outcome",
				agent_key: agentKey,
				type: "hire",
				value: 2.5,
				metadata: {},
				timestamp: b.body.timestamp,
				received_at: b.body.created_at,
				subscription_id: subscription.id,
				billable: true,
			},
			{
				id: c.body.id,
				kind: "action",
				agent_key: agentKey,
				type: "llm_call",
				value: null,
				metadata: {},
				timestamp: c.body.timestamp,
				received_at: c.body.created_at,
				subscription_id: subscription.id,
				billable: true,
			},
		]);
		// The explorer shows the same objects.
		const explored = await get(`/v1/events?subscription_id=${subscription.id}`);
		expect(explored.body.events.slice(0, 2)).toEqual([...today].reverse());
	});

	it("keeps counting while R2 fails, then archives every event exactly once on the alarm's retry", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await sendAction({ agent_key: agentKey });
		let failures = 0;
		await configure(stub, (_, state) => {
			injectFaults(state, {
				archive: {
					beforePut: () => {
						failures++;
						throw new Error("R2 unavailable");
					},
				},
			});
		});
		const sent = [(await sendAction({ agent_key: agentKey })).body.id];
		// The alarm fails to archive and re-arms for a retry; ingest goes on meanwhile.
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(failures).toBe(1);
		await runInDurableObject(stub, async (_, state) => {
			expect(await state.storage.getAlarm()).not.toBeNull();
		});
		for (let i = 0; i < 3; i++) {
			const response = await post("/v1/actions/batch", {
				events: Array.from({ length: 10 }, () => ({ agent_key: agentKey, action_type: "llm_call" })),
			});
			expect(response.status).toBe(201);
			sent.push(...response.body.results.map((r: { id: string }) => r.id));
		}
		// A write that fails after the first object of a batch was stored: the retry rewrites the same key.
		await runInDurableObject(stub, (_, state) => {
			injectFaults(state, {});
		});
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		const archived = await archivedEvents(`live:inst:${agentKey}`);
		const ids = archived.map((event) => event.id);
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids).toEqual(expect.arrayContaining(sent));
		expect(ids).toHaveLength(sent.length + 1);
		expect(archived.every((event) => event.billable === false && event.subscription_id === null)).toBe(true);
		// Nothing left to archive: the alarm is not armed again.
		await runInDurableObject(stub, async (_, state) => {
			expect(await state.storage.getAlarm()).toBeNull();
		});
	});

	it("never leaves a processed event out after a retried batch that had written some of its objects", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await sendAction({ agent_key: agentKey });
		let puts = 0;
		await configure(stub, (_, state) => {
			injectFaults(state, {
				archive: {
					beforePut: () => {
						// The second object of the batch (the second day) fails once.
						if (++puts === 2) throw new Error("R2 timeout");
					},
				},
			});
		});
		const twoDaysAgo = new Date(Date.now() - 2 * DAY).toISOString();
		const older = await sendAction({ agent_key: agentKey, timestamp: twoDaysAgo });
		expect(await stub.flush()).toMatchObject({ archiveFailed: true });
		const newer = await sendAction({ agent_key: agentKey, timestamp: twoDaysAgo });
		expect(await stub.flush()).toMatchObject({ archiveFailed: false, events: 3 });
		const archived = await archivedEvents(`live:inst:${agentKey}`);
		expect(archived.map((e) => e.id)).toEqual(expect.arrayContaining([older.body.id, newer.body.id]));
		expect(archived).toHaveLength(3);
	});
});

describe("GET /v1/events/export", () => {
	it("streams every archived event of a day in the key's environment as NDJSON", async () => {
		const agentKey = uniqueKey();
		const day = new Date(Date.now() - 3 * DAY).toISOString().slice(0, 10);
		const timestamp = `${day}T12:00:00.000Z`;
		const live = await post("/v1/actions/batch", {
			events: Array.from({ length: 3 }, () => ({ agent_key: agentKey, action_type: "exported", timestamp })),
		});
		const testAdmin = await createKey("admin", "test");
		const testSdk = await createKey("sdk", "test");
		const other = await post(
			"/v1/actions/batch",
			{ events: [{ agent_key: agentKey, action_type: "exported", timestamp }] },
			{ key: testSdk },
		);
		await instanceAccumulator(agentKey).flush();
		await instanceAccumulator(agentKey, "test").flush();

		const lines = await exportLines(day);
		const mine = lines.filter((line) => line.agent_key === agentKey);
		expect(mine.map((line) => line.id).sort()).toEqual(
			live.body.results.map((r: { id: string }) => r.id).sort(),
		);
		expect(lines.every((line) => line.timestamp.startsWith(day))).toBe(true);
		expect(mine[0]).toMatchObject({
			kind: "action",
			type: "exported",
			subscription_id: null,
			billable: false,
		});

		const testLines = (await exportLines(day, testAdmin)).filter((line) => line.agent_key === agentKey);
		expect(testLines.map((line) => line.id)).toEqual([other.body.results[0].id]);

		expect(await exportLines("2001-01-01")).toEqual([]);
	});

	it("refuses a bad or missing date, unknown parameters, and keys below admin", async () => {
		for (const query of [
			"",
			"?date=2026-02-30",
			"?date=2026-13-45",
			"?date=yesterday",
			"?date=2026-01-01&x=1",
		]) {
			expectError(await get(`/v1/events/export${query}`), 400, "validation_error");
		}
		for (const kind of ["sdk", "read-only", "read-write"] as const) {
			expectError(
				await get("/v1/events/export?date=2026-01-01", { key: await createKey(kind) }),
				403,
				"forbidden",
			);
		}
		expectError(await get("/v1/events/export?date=2026-01-01", { key: null }), 401, "unauthorized");
	});
});
