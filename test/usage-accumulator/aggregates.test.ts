import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countInStore } from "../../src/durable-objects/usage-accumulator/parts/counting";
import { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { Decimal } from "../../src/lib/decimal";
import { instanceAccumulator, uniqueKey } from "../subscriptions/fixtures";

function action(
	agentKey: string,
	i: number,
	timestamp: string,
	metadata: MeteringEvent["metadata"],
): MeteringEvent {
	return {
		id: `act_agg${String(i).padStart(23, "0")}`,
		kind: "action",
		agentKey,
		type: i % 3 === 0 ? "search" : "llm_call",
		value: null,
		metadata,
		timestamp,
		receivedAt: timestamp,
		idempotencyKey: null,
	};
}

/** The object's storage, with every SQL statement it is asked to run noted in `statements`. */
function notingStatements(storage: DurableObjectStorage) {
	const statements: string[] = [];
	const bound = <T extends object>(target: T, property: string | symbol) => {
		const value = Reflect.get(target, property);
		return typeof value === "function" ? value.bind(target) : value;
	};
	const sql = new Proxy(storage.sql, {
		get(target, property) {
			if (property !== "exec") return bound(target, property);
			return (query: string, ...bindings: unknown[]) => {
				statements.push(query);
				return target.exec(query, ...bindings);
			};
		},
	});
	const noted = new Proxy(storage, {
		get: (target, property) => (property === "sql" ? sql : bound(target, property)),
	});
	return { storage: noted, statements };
}

// gpt-4o at the catalog's 2.5 / 10 per million tokens: 1,000 input and 500 output tokens cost 0.0075.
const GPT4O = { model: "gpt-4o", input_tokens: 1000, output_tokens: 500 };

/** An observer whose write fails: the record call's transaction rolls back after the aggregates were written. */
const FAILING_OBSERVER = {
	count: () => {},
	applyTo: () => {
		throw new Error("observer failed");
	},
};

describe("accumulator aggregates", () => {
	it("sum metadata exactly: large integers past the safe range, fractions and negatives, in any order", async () => {
		const agentKey = uniqueKey("agg");
		const stub = instanceAccumulator(agentKey);
		const today = new Date().toISOString();
		const yesterday = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
		const values = [
			Number.MAX_SAFE_INTEGER,
			Number.MAX_SAFE_INTEGER - 1,
			1,
			0.1,
			-7,
			2 ** 60,
			0.2,
			-Number.MAX_SAFE_INTEGER,
			3,
			1e-7,
			12,
		];
		// Days and types alternate, so consecutive events often fall in different aggregate rows.
		const events = values.flatMap((n, i) => [
			action(agentKey, 2 * i, i % 2 ? yesterday : today, { n, label: "x" }),
			action(agentKey, 2 * i + 1, today, { n: i }),
		]);
		const expected = new Map<string, { count: number; sum: Decimal }>();
		for (const event of events) {
			const key = `${event.timestamp.slice(0, 10)} ${event.type}`;
			const entry = expected.get(key) ?? { count: 0, sum: Decimal.ZERO };
			entry.count++;
			entry.sum = entry.sum.add(Decimal.from(event.metadata?.n as number));
			expected.set(key, entry);
		}
		await runInDurableObject(stub, (_, state) => {
			const store = new AccumulatorStore(state.storage);
			const name = `live:inst:${agentKey}`;
			// In two calls, so stored sums are added to as well.
			countInStore(store, { name, accountId: null, claims: {}, events: events.slice(0, 9) }, Date.now());
			countInStore(store, { name, accountId: null, claims: {}, events: events.slice(9) }, Date.now());
			const rows = state.storage.sql
				.exec<{ day: string; type: string; count: number; sum: string }>(
					"SELECT day, type, count, sum FROM daily WHERE field = 'n'",
				)
				.toArray();
			expect(new Map(rows.map((r) => [`${r.day} ${r.type}`, { count: r.count, sum: r.sum }]))).toEqual(
				new Map([...expected].map(([key, e]) => [key, { count: e.count, sum: e.sum.toString() }])),
			);
		});
	});

	it("stay exact when a call's transaction rolls back after its sums were noted (the store's sum cache)", async () => {
		const agentKey = uniqueKey("aggcache");
		const stub = instanceAccumulator(agentKey);
		const today = new Date().toISOString();
		await runInDurableObject(stub, (_, state) => {
			const store = new AccumulatorStore(state.storage);
			const name = `live:inst:${agentKey}`;
			const call = (i: number, n: number) => ({
				name,
				accountId: null,
				claims: {},
				events: [{ ...action(agentKey, 1, today, { n }), id: `act_aggcache${String(i).padStart(18, "0")}` }],
			});
			// Single-event calls, each a few rows: the plain upserts, sums from what the store noted.
			for (let i = 0; i < 5; i++) countInStore(store, call(i, 10), Date.now());
			// A call whose transaction fails after the aggregates were written: nothing of it may stay, in storage
			// or in what the store remembers of its sums.
			expect(() => countInStore(store, call(5, 1000), Date.now(), undefined, FAILING_OBSERVER)).toThrow(
				"observer failed",
			);
			countInStore(store, call(6, 10), Date.now());
			const row = state.storage.sql
				.exec<{ count: number; sum: string }>("SELECT count, sum FROM daily WHERE field = 'n'")
				.one();
			expect(row).toEqual({ count: 6, sum: "60" });
		});
	});

	it("add a warm call's model cost to the amount they noted, without reading it back", async () => {
		const agentKey = uniqueKey("aggcost");
		const stub = instanceAccumulator(agentKey);
		const today = new Date().toISOString();
		await runInDurableObject(stub, (_, state) => {
			const { storage, statements } = notingStatements(state.storage);
			const store = new AccumulatorStore(storage);
			const name = `live:inst:${agentKey}`;
			const call = (i: number) => ({
				name,
				accountId: null,
				claims: {},
				events: [{ ...action(agentKey, 1, today, GPT4O), id: `act_aggcost${String(i).padStart(19, "0")}` }],
			});
			countInStore(store, call(0), Date.now());
			statements.length = 0;
			for (let i = 1; i < 4; i++) countInStore(store, call(i), Date.now());
			expect(statements.filter((query) => /JOIN model_costs/.test(query))).toEqual([]);
			expect(statements.filter((query) => /INSERT INTO model_costs/.test(query))).toHaveLength(3);
			const row = state.storage.sql
				.exec<{ amount: string; version: number }>("SELECT amount, version FROM model_costs")
				.one();
			expect(row).toEqual({ amount: "0.03", version: 4 });
		});
	});

	it("stay exact in model costs when a call's transaction rolls back after its amount was noted", async () => {
		const agentKey = uniqueKey("aggcostcache");
		const stub = instanceAccumulator(agentKey);
		const today = new Date().toISOString();
		await runInDurableObject(stub, (_, state) => {
			const store = new AccumulatorStore(state.storage);
			const name = `live:inst:${agentKey}`;
			const call = (i: number, inputTokens: number) => ({
				name,
				accountId: null,
				claims: {},
				events: [
					{
						...action(agentKey, 1, today, { ...GPT4O, input_tokens: inputTokens }),
						id: `act_aggcostcache${String(i).padStart(14, "0")}`,
					},
				],
			});
			for (let i = 0; i < 2; i++) countInStore(store, call(i, 1000), Date.now());
			expect(() => countInStore(store, call(2, 1_000_000), Date.now(), undefined, FAILING_OBSERVER)).toThrow(
				"observer failed",
			);
			countInStore(store, call(3, 1000), Date.now());
			const row = state.storage.sql.exec<{ amount: string }>("SELECT amount FROM model_costs").one();
			expect(row).toEqual({ amount: "0.0225" });
		});
	});
});
