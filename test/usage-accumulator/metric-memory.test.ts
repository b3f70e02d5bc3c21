/**
 * The accumulator's memory of its metric quantities (metrics.ts, MetricQuantities): the alerts evaluated with each
 * counting pass read their period from it, so it must stay what is stored through every write, and be read again
 * after anything it cannot follow.
 */
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MetricDeltas } from "../../src/durable-objects/usage-accumulator/parts/metrics";
import { MetricQuantities } from "../../src/durable-objects/usage-accumulator/storage/metric-rows";
import { METRICS_SCHEMA } from "../../src/durable-objects/usage-accumulator/storage/schema";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import type { MeteredSource } from "../../src/pricing/sources";
import { createAccount, createKey, post } from "../helpers";
import {
	createPlan,
	instanceAccumulator,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

const TOKENS: MeteredSource = {
	key: "tokens",
	kind: "action",
	type: "llm_call",
	aggregate: "sum",
	field: "tokens",
	filter: [],
	currency: "USD",
};

function call(agentKey: string, tokens: number, timestamp: string): MeteringEvent {
	return {
		id: `act_${uniqueKey("mem")}`,
		kind: "action",
		agentKey,
		type: "llm_call",
		value: null,
		metadata: { tokens },
		timestamp,
		receivedAt: timestamp,
		idempotencyKey: null,
	};
}

/** `sql` with the text of every statement it runs noted in `statements`. */
function noting(sql: SqlStorage) {
	const statements: string[] = [];
	const exec = ((query: string, ...bindings: unknown[]) => {
		statements.push(query);
		return sql.exec(query, ...bindings);
	}) as SqlStorage["exec"];
	return {
		sql: new Proxy(sql, { get: (target, p) => (p === "exec" ? exec : Reflect.get(target, p)) }),
		statements,
	};
}

const quantities = (rows: { agentKey: string; source: string; quantity: string }[]) =>
	Object.fromEntries(rows.map((row) => [`${row.agentKey}/${row.source}`, row.quantity]));

/** Runs `work` in a fresh object with the metrics tables, its statements noted, on the current period. */
function inMetricsTables(
	work: (sql: SqlStorage, statements: string[], period: string, at: string) => void,
): Promise<void> {
	const period = new Date().toISOString().slice(0, 7);
	return runInDurableObject(instanceAccumulator(uniqueKey("mem")), (_, state) => {
		const { sql, statements } = noting(state.storage.sql);
		sql.exec(METRICS_SCHEMA);
		work(sql, statements, period, `${period}-02T10:00:00.000Z`);
	});
}

describe("the memory of metric quantities", () => {
	it("reads a period once, then follows every write made through it, until cleared", async () => {
		await inMetricsTables((sql, statements, period, at) => {
			const known = new MetricQuantities();
			const write = (events: MeteringEvent[], memory: MetricQuantities | undefined = known) => {
				const deltas = new MetricDeltas(() => [TOKENS], memory);
				for (const event of events) deltas.count(event);
				deltas.applyTo(sql);
			};
			// A row written before the period is read whole: the read finds it.
			write([call("a", 5, at)], undefined);
			const reads = () => statements.filter((query) => /FROM metrics WHERE period/.test(query)).length;
			expect(quantities(known.periodRows(sql, period))).toEqual({ "a/tokens": "5" });
			expect(reads()).toBe(1);

			write([call("a", 7, at), call("b", 1, at)]);
			expect(quantities(known.periodRows(sql, period))).toEqual({ "a/tokens": "12", "b/tokens": "1" });
			expect(reads()).toBe(1);

			// A write it does not see, then clear(): the next read goes to storage again.
			sql.exec("UPDATE metrics SET quantity = '40' WHERE agent_key = 'b'");
			known.clear();
			expect(quantities(known.periodRows(sql, period))).toEqual({ "a/tokens": "12", "b/tokens": "40" });
			expect(reads()).toBe(2);
		});
	});

	it("forgets the periods it held whole when its rows overflow", async () => {
		await inMetricsTables((sql, statements, period, at) => {
			const known = new MetricQuantities(2);
			const write = (agentKey: string, tokens: number) => {
				const deltas = new MetricDeltas(() => [TOKENS], known);
				deltas.count(call(agentKey, tokens, at));
				deltas.applyTo(sql);
			};
			write("a", 1);
			expect(quantities(known.periodRows(sql, period))).toEqual({ "a/tokens": "1" });
			write("b", 1);
			// The third row overflows the memory: it clears, so the period is read again, whole and right.
			write("c", 1);
			sql.exec("UPDATE metrics SET quantity = '9' WHERE agent_key = 'a'");
			expect(quantities(known.periodRows(sql, period))).toEqual({
				"a/tokens": "9",
				"b/tokens": "1",
				"c/tokens": "1",
			});
			expect(statements.filter((query) => /FROM metrics WHERE period/.test(query))).toHaveLength(2);
		});
	});
});

describe("alerts on a filtered charge, evaluated with each event", () => {
	it("read no metric row back once warm, and trigger when an event crosses the threshold", async () => {
		const agentKey = uniqueKey("memalert");
		const account = await createAccount();
		const plan = await createPlan({
			charges: [
				{
					metric: "tokens_small",
					source: {
						kind: "action",
						type: "llm_call",
						aggregate: "sum",
						field: "tokens",
						filter: { model: "small" },
					},
					model: "per_unit",
					unit_price: 0.001,
				},
			],
		});
		const subscription = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [agentKey],
		});
		expect(subscription.status).toBe(201);
		const alert = await post("/v1/alerts", {
			subscription_id: subscription.body.id,
			metric: "tokens_small",
			threshold: 50,
		});
		expect(alert.status, JSON.stringify(alert.body)).toBe(201);
		const sdkKey = await createKey("sdk");
		const send = async (tokens: number) => {
			const response = await exports.default.fetch("https://billing.test/v1/actions", {
				method: "POST",
				headers: { Authorization: `Bearer ${sdkKey}`, "Content-Type": "application/json" },
				body: JSON.stringify({
					agent_key: agentKey,
					action_type: "llm_call",
					metadata: { tokens, model: "small" },
				}),
			});
			expect(response.status).toBe(201);
		};
		const stub = subscriptionAccumulator(subscription.body.id);
		const triggers = () =>
			runInDurableObject(stub, (_, state) =>
				state.storage.sql.exec<{ value: string }>("SELECT value FROM alert_triggers").toArray(),
			);
		await send(10);
		await send(10);
		// Every statement the object runs from here on, noted on the prototype its storage's sql shares.
		const statements: string[] = [];
		const restore = await runInDurableObject(stub, (_, state) => {
			const prototype = Object.getPrototypeOf(state.storage.sql) as SqlStorage;
			const exec = prototype.exec;
			prototype.exec = function (this: SqlStorage, query: string, ...bindings: unknown[]) {
				statements.push(query);
				return exec.call(this, query, ...bindings);
			} as SqlStorage["exec"];
			return () => {
				prototype.exec = exec;
			};
		});
		try {
			await send(10);
			await send(10);
			expect(await triggers()).toEqual([]);
			await send(10);
		} finally {
			await runInDurableObject(stub, () => restore());
		}
		expect(statements.filter((query) => /FROM metrics WHERE period/.test(query))).toEqual([]);
		expect(statements.filter((query) => /INSERT INTO metrics/.test(query))).toHaveLength(3);
		expect(await triggers()).toEqual([{ value: "50" }]);
	});
});
