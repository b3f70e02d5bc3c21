/**
 * GET /v1/events below what the accumulators keep (§15: "older pages may come from the archive"): events an
 * accumulator purged (past retention, or early over its size cap) are listed from the R2 archive, in order, each
 * once across the seam between accumulator and archive pages, with every filter; an unreadable archive object is
 * an error, never a wrong page.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import {
	purgeRawEvents,
	readRawEvents,
} from "../../src/durable-objects/usage-accumulator/storage/raw-events";
import { MAX_ARCHIVE_REQUESTS } from "../../src/events/archive-pages";
import { expectError, get, post } from "../helpers";
import {
	instanceAccumulator,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";
import { archiveKeys } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number, ms = 0) => new Date(Date.now() - days * DAY + ms).toISOString();

type Stub = ReturnType<typeof instanceAccumulator>;
type Sent = { id: string; timestamp: string };

const newestFirst = (a: Sent, b: Sent) =>
	a.timestamp === b.timestamp ? (a.id < b.id ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1;
const inOrder = (events: Sent[]) => [...events].sort(newestFirst).map((event) => event.id);

async function holdAlarm(stub: Stub) {
	await runInDurableObject(stub, (instance: UsageAccumulator) => {
		instance.settings.flushDelayMs = 60_000;
	});
}

/** Flushes (D1 and the archive), then purges every archived event as of `now` (as over a size cap of 0). */
async function archiveAndPurge(stub: Stub, now = Date.now(), maxBytes = 0) {
	expect(await stub.flush()).toMatchObject({ archiveFailed: false, complete: true });
	await runInDurableObject(stub, (_, state) => purgeRawEvents(state.storage, now, maxBytes));
}

async function keptIds(stub: Stub): Promise<string[]> {
	return await runInDurableObject(stub, (_, state) =>
		readRawEvents(state.storage.sql, "2000-01-01T00:00:00.000Z", "2100-01-01T00:00:00.000Z").map((e) => e.id),
	);
}

async function sendActions(agentKey: string, timestamps: string[], actionType = "step"): Promise<Sent[]> {
	if (timestamps.length === 0) return [];
	const response = await post("/v1/actions/batch", {
		events: timestamps.map((timestamp) => ({ agent_key: agentKey, action_type: actionType, timestamp })),
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body.results.map((r: Sent) => ({ id: r.id, timestamp: r.timestamp }));
}

/** Every page of a query: the ids in the order listed, and the pages' sizes. */
async function listAll(query: string, limit: number) {
	const ids: string[] = [];
	const sizes: number[] = [];
	let cursor: string | null = null;
	do {
		const response: { status: number; body: any } = await get(
			`/v1/events?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
		);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		ids.push(...response.body.events.map((event: Sent) => event.id));
		sizes.push(response.body.events.length);
		cursor = response.body.next_cursor;
	} while (cursor !== null && sizes.length < 500);
	expect(cursor).toBeNull();
	return { ids, sizes };
}

describe("GET /v1/events from the archive", () => {
	it("lists events older than what the accumulator keeps (purged past retention) from the archive, newest first", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await holdAlarm(stub);
		const old = await sendActions(agentKey, [daysAgo(30), daysAgo(20), daysAgo(20), daysAgo(10), daysAgo(2)]);
		// 40 days later by the accumulator's clock: everything archived is past retention and goes.
		await archiveAndPurge(stub, Date.now() + 40 * DAY, Number.MAX_SAFE_INTEGER);
		expect(await keptIds(stub)).toEqual([]);
		const recent = await sendActions(agentKey, [daysAgo(0, -1000), daysAgo(1)]);

		const all = [...old, ...recent];
		expect((await listAll(`agent_key=${agentKey}`, 100)).ids).toEqual(inOrder(all));
		expect((await listAll(`agent_key=${agentKey}`, 2)).ids).toEqual(inOrder(all));
		// A range older than anything kept is read from the archive alone.
		const from = daysAgo(25).slice(0, 10);
		const to = daysAgo(15).slice(0, 10);
		expect((await listAll(`agent_key=${agentKey}&start_date=${from}&end_date=${to}`, 1)).ids).toEqual(
			inOrder(old.filter((e) => e.timestamp >= `${from}T` && e.timestamp < daysAgo(14).slice(0, 10))),
		);
	});

	it("pages across the seam with every event once: purged (archive only), kept and archived (both), not archived yet", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await holdAlarm(stub);
		// Interleaved timestamps, with ties, so that each store holds events on both sides of the others'.
		const purged = await sendActions(agentKey, [daysAgo(9), daysAgo(7), daysAgo(5), daysAgo(5), daysAgo(3)]);
		await archiveAndPurge(stub);
		expect(await keptIds(stub)).toEqual([]);
		const both = await sendActions(agentKey, [daysAgo(8), daysAgo(5), daysAgo(4), daysAgo(1)]);
		expect(await stub.flush()).toMatchObject({ archiveFailed: false });
		const liveOnly = await sendActions(agentKey, [daysAgo(6), daysAgo(5), daysAgo(0)]);
		expect(await keptIds(stub)).toHaveLength(both.length + liveOnly.length);

		const expected = inOrder([...purged, ...both, ...liveOnly]);
		for (const limit of [1, 2, 3, 5, 12, 100]) {
			const { ids, sizes } = await listAll(`agent_key=${agentKey}`, limit);
			expect(ids, `limit ${limit}`).toEqual(expected);
			expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
		}
	});

	it("lists each event once in order whatever is purged, archived or live, for any page size (property)", async () => {
		const instants = Array.from({ length: 8 }, (_, i) => daysAgo(i + 1));
		const event = fc.record({
			at: fc.integer({ min: 0, max: instants.length - 1 }),
			store: fc.constantFrom("purged", "both", "live"),
		});
		await fc.assert(
			fc.asyncProperty(
				fc.array(event, { minLength: 1, maxLength: 24 }),
				fc.integer({ min: 1, max: 9 }),
				async (events, limit) => {
					const agentKey = uniqueKey("prop");
					const stub = instanceAccumulator(agentKey);
					await holdAlarm(stub);
					const of = (store: string) =>
						events.filter((e) => e.store === store).map((e) => instants[e.at] as string);
					const sent = await sendActions(agentKey, of("purged"));
					await archiveAndPurge(stub);
					sent.push(...(await sendActions(agentKey, of("both"))));
					expect(await stub.flush()).toMatchObject({ archiveFailed: false });
					sent.push(...(await sendActions(agentKey, of("live"))));
					expect((await listAll(`agent_key=${agentKey}`, limit)).ids).toEqual(inOrder(sent));
				},
			),
			{ numRuns: 20 },
		);
	});

	it("applies every filter to archive pages: subscription, an instance across its accumulators, kind, type, dates", async () => {
		const agentKey = uniqueKey();
		const other = uniqueKey();
		const own = instanceAccumulator(agentKey);
		await holdAlarm(own);
		// Before its subscription, the instance's own accumulator counts it.
		const alone = await sendActions(agentKey, [daysAgo(12), daysAgo(11)], "search");
		await archiveAndPurge(own);
		const { subscription } = await subscribe([agentKey, other]);
		const sub = subscriptionAccumulator(subscription.id);
		await holdAlarm(sub);
		const mine = await sendActions(agentKey, [daysAgo(0, -3000), daysAgo(0, -2000)], "search");
		const calls = await sendActions(agentKey, [daysAgo(0, -1000)], "llm_call");
		const theirs = await sendActions(other, [daysAgo(0, -2500)], "search");
		const outcome = await sendOutcome({ agent_key: agentKey, timestamp: daysAgo(0, -500) });
		expect(outcome.status).toBe(201);
		const hire = { id: outcome.body.id as string, timestamp: outcome.body.timestamp as string };
		await archiveAndPurge(sub);
		expect(await keptIds(sub)).toEqual([]);
		expect(await keptIds(own)).toEqual([]);

		const ids = async (query: string, limit = 1) => (await listAll(query, limit)).ids;
		const inSubscription = [...mine, ...calls, ...theirs, hire];
		expect(await ids(`subscription_id=${subscription.id}`)).toEqual(inOrder(inSubscription));
		expect(await ids(`subscription_id=${subscription.id}&agent_key=${other}`)).toEqual(inOrder(theirs));
		// The instance's history: its own accumulator's archive and the subscription's, merged.
		expect(await ids(`agent_key=${agentKey}`, 2)).toEqual(inOrder([...alone, ...mine, ...calls, hire]));
		expect(await ids(`agent_key=${agentKey}&kind=outcome`)).toEqual([hire.id]);
		expect(await ids(`agent_key=${agentKey}&kind=action&type=search`)).toEqual(inOrder([...alone, ...mine]));
		expect(await ids(`subscription_id=${subscription.id}&type=llm_call`)).toEqual(inOrder(calls));
		const day = daysAgo(11).slice(0, 10);
		expect(await ids(`agent_key=${agentKey}&start_date=${day}&end_date=${day}`)).toEqual([alone[1]?.id]);
		expect(await ids(`agent_key=${agentKey}&end_date=${day}`)).toEqual(inOrder(alone));
		expect(await ids(`agent_key=${agentKey}&type=unknown`)).toEqual([]);
		expect(await ids(`agent_key=${other}`)).toEqual(inOrder(theirs));
	});

	it("bounds the R2 requests of a page: a shorter page with a cursor, then the rest, each event once", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await holdAlarm(stub);
		// One archive object per flush, all on one day, in time order.
		const sent: Sent[] = [];
		const day = daysAgo(3).slice(0, 10);
		for (let i = 0; i < MAX_ARCHIVE_REQUESTS + 4; i++) {
			sent.push(...(await sendActions(agentKey, [`${day}T12:00:${String(i).padStart(2, "0")}.000Z`])));
			expect(await stub.flush()).toMatchObject({ archiveFailed: false });
		}
		await archiveAndPurge(stub);
		const { ids, sizes } = await listAll(`agent_key=${agentKey}`, 100);
		expect(ids).toEqual(inOrder(sent));
		// One list of the day, then one read per object: the first page stops at the bound.
		expect(sizes[0]).toBe(MAX_ARCHIVE_REQUESTS - 1);
		expect(sizes).toHaveLength(2);
	});

	it("records each archive object's time range, so that a page opens only the objects that can hold its events", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await holdAlarm(stub);
		const sent = await sendActions(agentKey, [daysAgo(3, 5), daysAgo(3), daysAgo(3, 9)]);
		expect(await stub.flush()).toMatchObject({ archiveFailed: false });
		const [key] = (await archiveKeys("events/live/")).filter((k) => k.includes(`/live:inst:${agentKey}/`));
		const head = await env.EVENTS_ARCHIVE.head(key as string);
		expect(head?.customMetadata).toEqual({
			min_ts: sent[1]?.timestamp,
			max_ts: sent[2]?.timestamp,
		});
	});

	it("answers a clear error when an archive object cannot be read, never a page without its events", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await holdAlarm(stub);
		const old = await sendActions(agentKey, [daysAgo(4), daysAgo(3)]);
		await archiveAndPurge(stub);
		const recent = await sendActions(agentKey, [daysAgo(1)]);
		const [key] = (await archiveKeys(`events/live/${daysAgo(4).slice(0, 10)}/`)).filter((k) =>
			k.includes(`/live:inst:${agentKey}/`),
		);
		await env.EVENTS_ARCHIVE.put(key as string, "not gzip");

		// The newest page needs no archive object; the next one needs the corrupt one.
		const first = await get(`/v1/events?agent_key=${agentKey}&limit=1`);
		expect(first.status).toBe(200);
		expect(first.body.events.map((e: Sent) => e.id)).toEqual([recent[0]?.id]);
		const failed = await get(`/v1/events?agent_key=${agentKey}&limit=2&cursor=${first.body.next_cursor}`);
		expectError(failed, 500, "internal_error");
		expect(failed.body.error.message).toMatch(/archive could not be read/);
		// Listing without the broken day still works.
		const day = daysAgo(3).slice(0, 10);
		const rest = await get(`/v1/events?agent_key=${agentKey}&start_date=${day}&end_date=${day}`);
		expect(rest.body.events.map((e: Sent) => e.id)).toEqual([old[1]?.id]);
	});
});
