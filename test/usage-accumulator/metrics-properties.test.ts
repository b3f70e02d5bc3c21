import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countInStore } from "../../src/durable-objects/usage-accumulator/parts/counting";
import { MetricDeltas, rebuildPeriod } from "../../src/durable-objects/usage-accumulator/parts/metrics";
import { readMetrics } from "../../src/durable-objects/usage-accumulator/storage/metric-rows";
import { METRICS_SCHEMA } from "../../src/durable-objects/usage-accumulator/storage/schema";
import { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import { StoredValues } from "../../src/durable-objects/usage-accumulator/storage/stored-values";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { partKeyOf } from "../../src/lib/day-keys";
import { Decimal } from "../../src/lib/decimal";
import type { ChargeSource } from "../../src/pricing/charges";
import { combineQuantities, meteredSources, sourceKey } from "../../src/pricing/sources";

// The accumulator's filtered / max / unique_count quantities equal a naive computation over all the events,
// however the events are split into record calls and whichever instance sends them.

const NAME = "live:sub:sub_metricsproperty";

const sources: ChargeSource[] = [
	{ kind: "action", type: "llm_call", aggregate: "sum", field: "tokens", filter: { model: ["a", "b"] } },
	{ kind: "action", type: "llm_call", aggregate: "count", filter: { model: "a", tier: "premium" } },
	{ kind: "action", type: "llm_call", aggregate: "max", field: "tokens" },
	{ kind: "action", type: "llm_call", aggregate: "unique_count", field: "user" },
	{ kind: "outcome", type: "deal", aggregate: "max" },
	{ kind: "outcome", type: "deal", aggregate: "sum", filter: { region: "eu" } },
];
const charges = sources.map((source, i) => ({
	metric: `m${i}`,
	source,
	model: "per_unit" as const,
	unit_price: 1,
}));

const metadataValue = (values: (string | number | boolean)[]) =>
	fc.option(fc.constantFrom(...values), { nil: undefined });

const eventArb = fc
	.record({
		outcome: fc.boolean(),
		agent: fc.constantFrom("i1", "i2", "i3"),
		model: metadataValue(["a", "b", "c"]),
		tier: metadataValue(["premium", "basic"]),
		region: metadataValue(["eu", "us"]),
		user: metadataValue(["u1", "u2", "u3", 7, true]),
		// Mostly token counts (safe integers, gathered as plain numbers), sometimes what must go through decimals:
		// sums past the safe range, fractions, negatives.
		tokens: fc.option(
			fc.oneof(
				{ arbitrary: fc.integer({ min: 0, max: 1_000_000 }), weight: 4 },
				{ arbitrary: fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 60, -5, 0.25, 1e-7), weight: 1 },
			),
			{ nil: undefined },
		),
		value: fc.integer({ min: 0, max: 10_000 }).map((cents) => Decimal.fromUnits(BigInt(cents), 2).toString()),
	})
	.map((e): MeteringEvent => {
		const metadata: Record<string, string | number | boolean> = {};
		for (const key of ["model", "tier", "region", "user", "tokens"] as const) {
			if (e[key] !== undefined) metadata[key] = e[key] as string | number | boolean;
		}
		return {
			id: `act_${crypto.randomUUID()}`,
			kind: e.outcome ? "outcome" : "action",
			agentKey: e.agent,
			type: e.outcome ? "deal" : "llm_call",
			value: e.outcome ? e.value : null,
			metadata,
			timestamp: "2026-11-10T10:00:00.000Z",
			receivedAt: "2026-11-10T10:00:00.000Z",
			idempotencyKey: null,
		};
	});

/** What each source's quantity must be, computed the obvious way. */
function reference(events: MeteringEvent[]): Map<string, Decimal> {
	const result = new Map<string, Decimal>();
	for (const source of sources) {
		const matching = events.filter(
			(e) =>
				e.kind === source.kind &&
				e.type === source.type &&
				Object.entries(source.filter ?? {}).every(([key, allowed]) => {
					const value = e.metadata?.[key];
					return value !== undefined && value !== null && [allowed].flat().includes(String(value));
				}),
		);
		const numbers = matching.flatMap((e) => {
			if (e.kind === "outcome") return [Decimal.from(e.value ?? "0")];
			const n = e.metadata?.[source.field ?? ""];
			return typeof n === "number" ? [Decimal.from(n)] : [];
		});
		let quantity: Decimal;
		if (source.aggregate === "count") quantity = Decimal.from(matching.length);
		else if (source.aggregate === "sum") quantity = Decimal.sum(numbers);
		else if (source.aggregate === "max")
			quantity = numbers.length ? Decimal.max(...(numbers as [Decimal])) : Decimal.ZERO;
		else {
			const values = matching.flatMap((e) => {
				const v = e.metadata?.[source.field ?? ""];
				return v === undefined || v === null ? [] : [String(v)];
			});
			quantity = Decimal.from(new Set(values).size);
		}
		if (!quantity.isZero()) result.set(sourceKey(source), quantity);
	}
	return result;
}

describe("metric quantities (property)", () => {
	it("equal a naive computation over all the events, whatever the record calls and their rollbacks", async () => {
		const stub = env.USAGE_ACCUMULATOR.get(env.USAGE_ACCUMULATOR.idFromName(NAME));
		await runInDurableObject(stub, (_, state) => {
			const store = new AccumulatorStore(state.storage);
			store.remember(NAME, null);
			// The subscription holds the three instances, their dedupe keys already taken over (handover.ts).
			const instances = ["i1", "i2", "i3"];
			store.applyHoldings(instances.map((agentKey) => ({ agentKey, generation: 1, held: true })));
			for (const agentKey of instances) store.markTakenOver({ agentKey, generation: 1 });
			const metered = meteredSources(charges);
			expect(metered).toHaveLength(sources.length);
			fc.assert(
				fc.property(
					fc.array(eventArb, { maxLength: 60 }),
					fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 10 }),
					fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
					(events, cuts, failures) => {
						state.storage.sql.exec("DELETE FROM metrics");
						state.storage.sql.exec("DELETE FROM metric_values");
						store.metricQuantities.clear();
						const counted: MeteringEvent[] = [];
						let start = 0;
						for (let i = 0; start < events.length; i++) {
							const size = cuts[i % cuts.length] as number;
							const batch = events.slice(start, start + size);
							start += size;
							// As the accumulator counts them, with the quantities it knows it wrote; a call that fails
							// after writing its metrics rolls back, and must leave nothing known of what it wrote.
							const deltas = new MetricDeltas(() => metered, store.metricQuantities);
							const fails = failures[i % failures.length] as boolean;
							const observer = {
								count: (event: MeteringEvent) => deltas.count(event),
								applyTo: (sql: SqlStorage) => {
									deltas.applyTo(sql);
									if (fails) throw new Error("the call fails after its metrics were written");
								},
							};
							const record = () =>
								countInStore(
									store,
									{ name: NAME, accountId: null, claims: { i1: 1, i2: 1, i3: 1 }, events: batch },
									Date.now(),
									undefined,
									observer,
								);
							if (fails) expect(record).toThrow("the call fails");
							else {
								record();
								counted.push(...batch);
							}
						}
						const stored = readMetrics(state.storage.sql, "2026-11");
						const totals = new Map(
							[...combineQuantities(stored)].filter(([, quantity]) => !quantity.isZero()),
						);
						expect(new Map([...totals].map(([k, v]) => [k, v.toString()]))).toEqual(
							new Map([...reference(counted)].map(([k, v]) => [k, v.toString()])),
						);
					},
				),
				{ numRuns: 100 },
			);
		});
	});

	it("per part of a split period, equal the naive computation over the part's events, counted or rebuilt", async () => {
		const name = "live:sub:sub_metricsparts";
		const stub = env.USAGE_ACCUMULATOR.get(env.USAGE_ACCUMULATOR.idFromName(name));
		await runInDurableObject(stub, (_, state) => {
			const sql = state.storage.sql;
			sql.exec(METRICS_SCHEMA);
			const metered = meteredSources(charges);
			const start = "2026-11-01T00:00:00.000Z";
			const instant = (seconds: number) => new Date(Date.parse(start) + seconds * 1000).toISOString();
			const seconds = fc.integer({ min: 0, max: 30 * 86_400 - 1 });
			fc.assert(
				fc.property(
					fc.array(fc.tuple(eventArb, seconds), { maxLength: 60 }),
					fc.uniqueArray(fc.integer({ min: 1, max: 30 * 86_400 - 1 }), { minLength: 1, maxLength: 3 }),
					fc.boolean(),
					(timed, cuts, rebuilt) => {
						sql.exec("DELETE FROM metrics");
						sql.exec("DELETE FROM metric_values");
						const events = timed.map(([event, at]) => ({ ...event, timestamp: instant(at) }));
						// A rebuild starts its rows from 0, so a max of only negative values reads 0 after one (as
						// before parts existed): left out of the rebuilt case.
						const negative = events.some(
							(e) => typeof e.metadata?.tokens === "number" && e.metadata.tokens < 0,
						);
						fc.pre(!(rebuilt && negative));
						const splits = cuts.map(instant);
						const parts = { start, splits, sources: metered };
						const deltas = new MetricDeltas(
							() => metered,
							undefined,
							undefined,
							() => parts,
						);
						for (const event of events) deltas.count(event);
						deltas.applyTo(sql);
						// Counted again from the same events (a plan learnt again): the part rows too start from 0.
						if (rebuilt) rebuildPeriod(sql, "2026-11", metered, events, new StoredValues(), undefined, parts);
						const quantities = (key: string) =>
							new Map(
								[...combineQuantities(readMetrics(sql, key))]
									.filter(([, quantity]) => !quantity.isZero())
									.map(([k, v]) => [k, v.toString()]),
							);
						const expected = (list: MeteringEvent[]) =>
							new Map([...reference(list)].map(([k, v]) => [k, v.toString()]));
						expect(quantities("2026-11")).toEqual(expected(events));
						for (const key of [start, ...splits]) {
							const inPart = events.filter((event) => partKeyOf(event.timestamp, start, splits) === key);
							expect(quantities(key)).toEqual(expected(inPart));
						}
					},
				),
				{ numRuns: 60 },
			);
		});
	});

	it("a source key does not depend on the order of filter keys or values", () => {
		fc.assert(
			fc.property(fc.shuffledSubarray(["a", "b", "c", "d"], { minLength: 1 }), (values) => {
				const one = sourceKey({
					kind: "action",
					type: "t",
					aggregate: "count",
					filter: { x: values, y: "1" },
				});
				const other = sourceKey({
					kind: "action",
					type: "t",
					aggregate: "count",
					filter: { y: "1", x: [...values].reverse() },
				});
				expect(one).toBe(other);
			}),
		);
	});
});
