/**
 * Raw events kept by the accumulator (§15): read by time range, purged after retention or over the size cap but
 * never before they are archived, v1 storage converted, and what each event costs in bytes.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { countInStore } from "../../src/durable-objects/usage-accumulator/parts/counting";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import type { EventRow } from "../../src/durable-objects/usage-accumulator/storage/event-rows";
import {
	insertRawEvents,
	markArchived,
	newestFirst,
	newestRawEvents,
	purgeRawEvents,
	RECENT_GROUPS_MAX_EVENTS,
	readRawEvents,
	readUnarchived,
} from "../../src/durable-objects/usage-accumulator/storage/raw-events";
import { RAW_EVENTS_SCHEMA } from "../../src/durable-objects/usage-accumulator/storage/schema";
import { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { post } from "../helpers";
import { instanceAccumulator, sendAction, uniqueKey } from "../subscriptions/fixtures";
import { archivedEvents } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function holdAlarm(agentKey: string) {
	await runInDurableObject(instanceAccumulator(agentKey), (instance: UsageAccumulator) => {
		instance.settings.flushDelayMs = 60_000;
	});
}

async function rawIds(agentKey: string, from = "2000-01-01T00:00:00.000Z", to = "2100-01-01T00:00:00.000Z") {
	return await runInDurableObject(instanceAccumulator(agentKey), (_, state) =>
		readRawEvents(state.storage.sql, from, to).map((event) => event.id),
	);
}

describe("raw events in the accumulator", () => {
	it("reads the events of a time range [from, to), archived or not, as they were sent", async () => {
		const agentKey = uniqueKey();
		await holdAlarm(agentKey);
		const sent: { id: string; timestamp: string; created_at: string; metadata: unknown }[] = [];
		for (const [days, tokens] of [
			[3, 1],
			[2, 2],
			[1, 3],
		] as const) {
			const response = await sendAction({
				agent_key: agentKey,
				timestamp: daysAgo(days),
				metadata: { tokens },
				idempotency_key: `t-${days}`,
			});
			expect(response.status).toBe(201);
			sent.push(response.body);
		}
		expect(await rawIds(agentKey)).toEqual(sent.map((e) => e.id));
		// The middle event only: from its own timestamp (inclusive) to the last one's (exclusive).
		const [oldest, middle, newest] = sent as [(typeof sent)[0], (typeof sent)[0], (typeof sent)[0]];
		expect(await rawIds(agentKey, middle.timestamp, newest.timestamp)).toEqual([middle.id]);
		expect(await runDurableObjectAlarm(instanceAccumulator(agentKey))).toBe(true);
		const events = await runInDurableObject(instanceAccumulator(agentKey), (_, state) =>
			readRawEvents(state.storage.sql, oldest.timestamp, daysAgo(0)),
		);
		expect(events).toEqual(
			sent.map((e) => ({
				id: e.id,
				kind: "action",
				agentKey,
				type: "llm_call",
				value: null,
				metadata: e.metadata,
				timestamp: e.timestamp,
				receivedAt: e.created_at,
				idempotencyKey: `t-${Math.round((Date.now() - Date.parse(e.timestamp)) / DAY)}`,
			})),
		);
	});

	it("reads nothing from an accumulator that never counted anything, and stores nothing", async () => {
		const agentKey = uniqueKey("never");
		expect(await rawIds(agentKey)).toEqual([]);
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
		});
	});

	it("purges after retention only what was archived", async () => {
		const agentKey = uniqueKey();
		await holdAlarm(agentKey);
		const old = await sendAction({ agent_key: agentKey, timestamp: daysAgo(34) });
		const recent = await sendAction({ agent_key: agentKey, timestamp: daysAgo(1) });
		const threeDaysLater = Date.now() + 3 * DAY;
		// Not archived yet: nothing goes, however old.
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			purgeRawEvents(state.storage, threeDaysLater);
			purgeRawEvents(state.storage, threeDaysLater, 0);
		});
		expect(await rawIds(agentKey)).toEqual([old.body.id, recent.body.id]);

		// Archived (a failed write first), then purged: the event 37 days old by then goes, the other stays.
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			injectFaults(state, {
				archive: {
					beforePut: () => {
						throw new Error("R2 unavailable");
					},
				},
			});
		});
		expect(await instanceAccumulator(agentKey).flush()).toMatchObject({ archiveFailed: true, events: 0 });
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			purgeRawEvents(state.storage, threeDaysLater);
			injectFaults(state, {});
		});
		expect(await rawIds(agentKey)).toEqual([old.body.id, recent.body.id]);
		expect(await instanceAccumulator(agentKey).flush()).toMatchObject({ archiveFailed: false, events: 2 });
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			purgeRawEvents(state.storage, threeDaysLater);
		});
		expect(await rawIds(agentKey)).toEqual([recent.body.id]);
		// Both stay in the archive.
		expect((await archivedEvents(`live:inst:${agentKey}`)).map((e) => e.id).sort()).toEqual(
			[old.body.id, recent.body.id].sort(),
		);
	});

	it("over its size cap, drops archived events oldest first and never an unarchived one", async () => {
		const agentKey = uniqueKey();
		await holdAlarm(agentKey);
		const first = await post("/v1/actions/batch", {
			events: Array.from({ length: 50 }, () => ({ agent_key: agentKey, action_type: "a" })),
		});
		expect(first.status).toBe(201);
		expect(await instanceAccumulator(agentKey).flush()).toMatchObject({ events: 50 });
		const second = await post("/v1/actions/batch", {
			events: Array.from({ length: 50 }, () => ({ agent_key: agentKey, action_type: "b" })),
		});
		expect(second.status).toBe(201);
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			purgeRawEvents(state.storage, Date.now(), 0);
		});
		expect(await rawIds(agentKey)).toEqual(second.body.results.map((r: { id: string }) => r.id));
	});

	it("converts events stored by v1 (pending_events, not yet flushed) into raw events to archive", async () => {
		const agentKey = uniqueKey();
		await sendAction({ agent_key: agentKey });
		const at = new Date().toISOString();
		const row = (id: string) => [id, "action", agentKey, "llm_call", null, { tokens: 2 }, at, at, null];
		await runInDurableObject(instanceAccumulator(agentKey), (instance: UsageAccumulator, state) => {
			instance.settings.flushDelayMs = 60_000;
			const sql = state.storage.sql;
			sql.exec(
				"CREATE TABLE pending_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, size INTEGER NOT NULL, json TEXT NOT NULL)",
			);
			sql.exec(
				"INSERT INTO pending_events (size, json) VALUES (2, ?)",
				JSON.stringify([row("act_v1000000000000000000000001"), row("act_v1000000000000000000000002")]),
			);
			new AccumulatorStore(state.storage);
			expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'pending_events'").toArray()).toEqual([]);
			expect(
				sql.exec("SELECT size, min_ts, max_ts, archived FROM raw_events ORDER BY seq DESC LIMIT 1").toArray(),
			).toEqual([{ size: 2, min_ts: at, max_ts: at, archived: 0 }]);
		});
		expect(await instanceAccumulator(agentKey).flush()).toMatchObject({ events: 3 });
		expect(
			(await archivedEvents(`live:inst:${agentKey}`)).filter((e) => e.id.startsWith("act_v1")),
		).toHaveLength(2);
	});

	it("costs a bounded number of bytes per event (measured)", async () => {
		const agentKey = uniqueKey("bytes");
		await holdAlarm(agentKey);
		const size = () =>
			runInDurableObject(instanceAccumulator(agentKey), (_, state) => state.storage.sql.databaseSize);
		await sendAction({ agent_key: agentKey });
		const before = await size();
		const count = 5_000;
		for (let sent = 0; sent < count; sent += 1000) {
			const response = await post("/v1/actions/batch", {
				events: Array.from({ length: 1000 }, (_, i) => ({
					agent_key: agentKey,
					action_type: "llm_call",
					metadata: { model: "gpt-4o", tokens: 1000 + ((sent + i) % 500), cost: 0.0125 },
				})),
			});
			expect(response.status).toBe(201);
		}
		const perEvent = ((await size()) - before) / count;
		expect(perEvent).toBeLessThan(250);
		// And in the archive, gzip NDJSON in the shape of GET /v1/events.
		expect(await instanceAccumulator(agentKey).flush()).toMatchObject({ events: count + 1 });
		const listed = await env.EVENTS_ARCHIVE.list({ prefix: "events/live/" });
		const archived = listed.objects
			.filter((object) => object.key.includes(`/live:inst:${agentKey}/`))
			.reduce((bytes, object) => bytes + object.size, 0);
		const archivePerEvent = archived / (count + 1);
		console.log(
			JSON.stringify({
				accumulatorBytesPerEvent: Math.round(perEvent),
				archiveBytesPerEvent: archivePerEvent,
			}),
		);
		expect(archivePerEvent).toBeGreaterThan(0);
		expect(archivePerEvent).toBeLessThan(100);
	});

	it("stores every event of a large call, in order, in groups written several to a statement", async () => {
		await runInDurableObject(instanceAccumulator(uniqueKey("groups")), (_, state) => {
			const sql = state.storage.sql;
			sql.exec(RAW_EVENTS_SCHEMA);
			const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
			const rows = (prefix: string, n: number): EventRow[] =>
				Array.from({ length: n }, (_, i) => [
					`${prefix}_${String(i).padStart(4, "0")}`,
					"action",
					"a",
					"t",
					null,
					{ i },
					at(i),
					at(i),
					null,
				]);
			// Groups of 4: 1,003 events make 251 groups, more than one statement's worth ten times over.
			const limits = { events: 4, eventBytes: 100_000, rows: 100 };
			const fresh = rows("new", 1003);
			const adopted = rows("old", 61);
			insertRawEvents(sql, fresh, limits);
			insertRawEvents(sql, adopted, limits, true);
			const groups = sql
				.exec<{ size: number; json: string; min_ts: string; max_ts: string; archived: number }>(
					"SELECT size, json, min_ts, max_ts, archived FROM raw_events ORDER BY seq",
				)
				.toArray();
			expect(groups).toHaveLength(251 + 16);
			const stored = groups.flatMap((g) => JSON.parse(g.json) as EventRow[]);
			expect(stored).toEqual([...fresh, ...adopted]);
			for (const g of groups) {
				const times = (JSON.parse(g.json) as EventRow[]).map((row) => row[6]);
				expect(g.size).toBe(times.length);
				expect([g.min_ts, g.max_ts]).toEqual([times[0], times.at(-1)]);
			}
			expect(groups.map((g) => g.archived)).toEqual([...Array(251).fill(0), ...Array(16).fill(1)]);
		});
	});

	it("archives from memory exactly what it would read back: after rollbacks, past the bound, after a restart", async () => {
		const agentKey = uniqueKey("recent");
		await runInDurableObject(instanceAccumulator(agentKey), (_, state) => {
			const sql = state.storage.sql;
			const name = `live:inst:${agentKey}`;
			let n = 0;
			const events = (count: number): MeteringEvent[] =>
				Array.from({ length: count }, () => {
					const at = daysAgo((n % 3) + 1);
					return {
						id: `act_recent${String(n++).padStart(16, "0")}`,
						kind: "action",
						agentKey,
						type: "llm_call",
						value: null,
						metadata: { n },
						timestamp: at,
						receivedAt: at,
						idempotencyKey: null,
					};
				});
			const record = (store: AccumulatorStore, count: number) =>
				countInStore(store, { name, accountId: null, claims: {}, events: events(count) }, Date.now());
			// The same oldest groups, whole, from memory as from SQLite, for batches of several sizes.
			const sameAsStored = (store: AccumulatorStore) => {
				for (const maxEvents of [1, 40, 700, 5_000, 20_000]) {
					expect(readUnarchived(sql, maxEvents, store.recentGroups)).toEqual(readUnarchived(sql, maxEvents));
				}
			};

			const store = new AccumulatorStore(state.storage);
			const archived: string[] = [];
			const archiveAll = () => {
				for (;;) {
					const batch = readUnarchived(sql, 1_000, store.recentGroups);
					if (batch.lastSeq === null) break;
					archived.push(...batch.rows.map((row) => row[0]));
					markArchived(sql, batch.lastSeq, store.recentGroups);
				}
			};
			record(store, 300);
			record(store, 1);
			sameAsStored(store);
			expect(store.recentGroups.isEmpty).toBe(false);
			// Part archived: memory forgets it with SQLite.
			const first = readUnarchived(sql, 100, store.recentGroups);
			archived.push(...first.rows.map((row) => row[0]));
			markArchived(sql, first.lastSeq as number, store.recentGroups);
			sameAsStored(store);
			// A group changed behind its back (adoption rewrites groups) is read from SQLite.
			const last = sql
				.exec<{ seq: number; json: string }>("SELECT seq, json FROM raw_events ORDER BY seq DESC LIMIT 1")
				.one();
			const kept = (JSON.parse(last.json) as EventRow[]).slice(1);
			sql.exec(
				"UPDATE raw_events SET json = ?, size = ? WHERE seq = ?",
				JSON.stringify(kept),
				kept.length,
				last.seq,
			);
			sameAsStored(store);
			archiveAll();
			expect(store.recentGroups.isEmpty).toBe(true);
			// Past its bound it holds only the oldest groups, and the rest is read from SQLite.
			record(store, RECENT_GROUPS_MAX_EVENTS - 50);
			sameAsStored(store);
			// A call that rolls back after its groups were noted, filling memory to its bound, leaves nothing of them
			// there: the next call's groups get the same seqs and sizes, and memory has no room to note them.
			const failing = {
				count: () => {},
				applyTo: () => {
					throw new Error("observer failed");
				},
			};
			expect(() =>
				countInStore(
					store,
					{ name, accountId: null, claims: {}, events: events(50) },
					Date.now(),
					undefined,
					failing,
				),
			).toThrow("observer failed");
			record(store, 50);
			sameAsStored(store);
			record(store, 500);
			sameAsStored(store);
			// A restarted object holds nothing in memory and reads everything.
			const restarted = new AccumulatorStore(state.storage);
			expect(restarted.recentGroups.isEmpty).toBe(true);
			sameAsStored(restarted);
			// Archived to the end, batch by batch, from memory while it holds them: every event once, in order.
			archiveAll();
			expect(store.recentGroups.isEmpty).toBe(true);
			const all = readRawEvents(sql, "2000-01-01T00:00:00.000Z", "2100-01-01T00:00:00.000Z").map((e) => e.id);
			expect(archived).toEqual(all);
		});
	});

	it("pages newest first through many groups exactly as a full sort would, with filters (property)", async () => {
		await runInDurableObject(instanceAccumulator(uniqueKey("pages")), (_, state) => {
			const sql = state.storage.sql;
			sql.exec(RAW_EVENTS_SCHEMA);
			let run = 0;
			fc.assert(
				fc.property(
					fc.array(
						fc.record({
							minute: fc.integer({ min: 0, max: 40 }),
							agent: fc.constantFrom("a", "b"),
							kind: fc.constantFrom("action", "outcome"),
						}),
						{ minLength: 0, maxLength: 120 },
					),
					fc.integer({ min: 1, max: 15 }),
					fc.constantFrom(undefined, "a"),
					fc.constantFrom(undefined, "outcome"),
					(specs, limit, agentKey, kind) => {
						sql.exec("DELETE FROM raw_events");
						run++;
						const rows: EventRow[] = specs.map((spec, i) => {
							const at = new Date(Date.UTC(2026, 0, 1, 0, spec.minute)).toISOString();
							const id = `evt_${String(run).padStart(4, "0")}_${String(i).padStart(4, "0")}`;
							return [id, spec.kind, spec.agent, "t", null, null, at, at, null];
						});
						// Small groups, so that a page spans several.
						insertRawEvents(sql, rows, { events: 4, eventBytes: 100_000, rows: 100 });
						const from = "2026-01-01T00:05:00.000Z";
						const to = "2026-01-01T00:35:00.000Z";
						const expected = rows
							.filter((r) => r[6] >= from && r[6] < to)
							.filter(
								(r) => (agentKey === undefined || r[2] === agentKey) && (kind === undefined || r[1] === kind),
							)
							.sort(newestFirst)
							.map((r) => r[0]);
						const got: string[] = [];
						let before: { timestamp: string; id: string } | null = null;
						for (let page = 0; page < 200; page++) {
							const found = newestRawEvents(sql, { from, to, before, agentKey, kind, limit });
							got.push(...found.map((r) => r[0]));
							const last = found.at(-1);
							if (found.length < limit || last === undefined) break;
							before = { timestamp: last[6], id: last[0] };
						}
						expect(got).toEqual(expected);
					},
				),
				{ numRuns: 60 },
			);
		});
	});
});
