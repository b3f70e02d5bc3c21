/** GET /v1/events (§15): real time, newest first, cursor pages, filters, an instance across accumulators, errors. */
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, patch, post } from "../helpers";
import { sendAction, sendOutcome, subscribe, uniqueKey } from "../subscriptions/fixtures";

const MINUTE = 60_000;
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * MINUTE).toISOString();

type Listed = { id: string; timestamp: string; kind: string; type: string; subscription_id: string | null };

async function allPages(query: string, limit: number) {
	const pages: Listed[][] = [];
	let cursor: string | null = null;
	do {
		const response: { status: number; body: any } = await get(
			`/v1/events?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
		);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		pages.push(response.body.events);
		cursor = response.body.next_cursor;
	} while (cursor !== null && pages.length < 50);
	return pages;
}

const newestFirst = (a: Listed, b: Listed) =>
	a.timestamp === b.timestamp ? (a.id < b.id ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1;

describe("GET /v1/events", () => {
	it("shows an event as soon as it was answered, with every field", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const sent = await sendOutcome({ agent_key: agentKey, value: 12.5, metadata: { lead: "l-1" } });
		const response = await get(`/v1/events?subscription_id=${subscription.id}`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual({
			events: [
				{
					id: sent.body.id,
					kind: "outcome",
					agent_key: agentKey,
					type: "hire",
					value: 12.5,
					metadata: { lead: "l-1" },
					timestamp: sent.body.timestamp,
					received_at: sent.body.created_at,
					subscription_id: subscription.id,
					billable: true,
				},
			],
			next_cursor: null,
		});
	});

	it("pages newest timestamp first with an opaque cursor, each event once", async () => {
		const agentKey = uniqueKey();
		// 23 events: timestamps out of order, some equal (the id breaks ties).
		const events = Array.from({ length: 23 }, (_, i) => ({
			agent_key: agentKey,
			action_type: "step",
			timestamp: minutesAgo((i * 7) % 11),
		}));
		const sent = await post("/v1/actions/batch", { events });
		expect(sent.status).toBe(201);
		const expected = sent.body.results
			.map((r: Listed) => r)
			.sort(newestFirst)
			.map((r: Listed) => r.id);

		const pages = await allPages(`agent_key=${agentKey}`, 10);
		expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
		expect(pages.flat().map((e) => e.id)).toEqual(expected);
		// Default page size 100: all at once, no cursor.
		const all = await get(`/v1/events?agent_key=${agentKey}`);
		expect(all.body.events).toHaveLength(23);
		expect(all.body.next_cursor).toBeNull();
		// A page size equal to the count ends without a cursor too.
		expect((await get(`/v1/events?agent_key=${agentKey}&limit=23`)).body.next_cursor).toBeNull();
	});

	it("follows an instance across the accumulators it passed through; by subscription, only that one's", async () => {
		const agentKey = uniqueKey();
		const before = await sendAction({ agent_key: agentKey, timestamp: minutesAgo(30) });
		const { subscription } = await subscribe([agentKey]);
		// Billable: it reached the subscription, at a timestamp after its start (now, by default).
		const during = await sendAction({ agent_key: agentKey });
		await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: [uniqueKey()] });
		const after = await sendAction({ agent_key: agentKey });

		const byInstance = (await get(`/v1/events?agent_key=${agentKey}`)).body.events;
		expect(byInstance.map((e: Listed) => [e.id, e.subscription_id])).toEqual([
			[after.body.id, null],
			[during.body.id, subscription.id],
			[before.body.id, null],
		]);
		expect(byInstance.map((e: { billable: boolean }) => e.billable)).toEqual([false, true, false]);
		const bySubscription = (await get(`/v1/events?subscription_id=${subscription.id}`)).body.events;
		expect(bySubscription.map((e: Listed) => e.id)).toEqual([during.body.id]);
		// Both: the instance's events in that subscription.
		const both = await get(`/v1/events?subscription_id=${subscription.id}&agent_key=${agentKey}`);
		expect(both.body.events.map((e: Listed) => e.id)).toEqual([during.body.id]);
	});

	it("filters by kind, type and dates (a bare end date covers its day)", async () => {
		const agentKey = uniqueKey();
		const today = new Date().toISOString().slice(0, 10);
		const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
		const old = await sendAction({
			agent_key: agentKey,
			action_type: "search",
			timestamp: `${yesterday}T12:00:00Z`,
		});
		const search = await sendAction({ agent_key: agentKey, action_type: "search" });
		const call = await sendAction({ agent_key: agentKey, action_type: "llm_call" });
		const hire = await sendOutcome({ agent_key: agentKey });
		const ids = async (query: string) =>
			(await get(`/v1/events?agent_key=${agentKey}&${query}`)).body.events.map((e: Listed) => e.id).sort();

		expect(await ids("kind=outcome")).toEqual([hire.body.id]);
		expect(await ids("kind=action&type=search")).toEqual([old.body.id, search.body.id].sort());
		expect(await ids("type=llm_call")).toEqual([call.body.id]);
		expect(await ids(`start_date=${today}`)).toEqual([search.body.id, call.body.id, hire.body.id].sort());
		expect(await ids(`end_date=${yesterday}`)).toEqual([old.body.id]);
		expect(await ids(`start_date=${yesterday}&end_date=${yesterday}`)).toEqual([old.body.id]);
		expect(await ids(`start_date=${yesterday}T12:00:00Z&end_date=${yesterday}T12:00:00Z`)).toEqual([
			old.body.id,
		]);
		expect(await ids("type=unknown")).toEqual([]);
	});

	it("keeps environments apart", async () => {
		const agentKey = uniqueKey();
		const testSdk = await createKey("sdk", "test");
		const testReader = await createKey("read-only", "test");
		await sendAction({ agent_key: agentKey });
		const inTest = await sendAction({ agent_key: agentKey }, { key: testSdk });
		const listed = await get(`/v1/events?agent_key=${agentKey}`, { key: testReader });
		expect(listed.body.events.map((e: Listed) => e.id)).toEqual([inTest.body.id]);
		const { subscription } = await subscribe();
		expectError(
			await get(`/v1/events?subscription_id=${subscription.id}`, { key: testReader }),
			404,
			"not_found",
		);
	});

	it("answers each error of the contract", async () => {
		const agentKey = uniqueKey();
		const bad = [
			"",
			"kind=action",
			`agent_key=${agentKey}&limit=0`,
			`agent_key=${agentKey}&limit=1001`,
			`agent_key=${agentKey}&limit=abc`,
			`agent_key=${agentKey}&limit=-1`,
			`agent_key=${agentKey}&limit=1e2`,
			`agent_key=${agentKey}&kind=click`,
			`agent_key=${agentKey}&type=bad type`,
			`agent_key=${agentKey}&cursor=not-a-cursor`,
			`agent_key=${agentKey}&start_date=2026-02-30`,
			`agent_key=${agentKey}&start_date=2026-03-02&end_date=2026-03-01`,
			`agent_key=${agentKey}&unknown=1`,
			"agent_key=bad key!",
		];
		for (const query of bad) {
			const error = expectError(await get(`/v1/events?${query}`), 400, "validation_error");
			expect(error.details?.length, query).toBeGreaterThan(0);
		}
		expectError(await get("/v1/events?subscription_id=sub_unknown"), 404, "not_found");
		expectError(
			await get(`/v1/events?agent_key=${agentKey}`, { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
		expectError(await get(`/v1/events?agent_key=${agentKey}`, { key: null }), 401, "unauthorized");
		// read-only keys may read.
		expect(
			(await get(`/v1/events?agent_key=${agentKey}`, { key: await createKey("read-only") })).status,
		).toBe(200);
	});
});
