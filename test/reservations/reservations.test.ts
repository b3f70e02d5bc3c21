/**
 * Budget reservations (docs/reservations.md): hold part of a budget before spending it. A hold fits when, for every
 * block alert on the total amount, spent so far + active holds + amount ≤ threshold; it ends settled by the event
 * that names it, released, or expired. Concurrent reservations never together exceed a budget, sharded or not.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
	accumulatorName,
	accumulatorStub,
	shardOf,
	subscriptionAccumulators,
} from "../../src/durable-objects/usage-accumulator/handle";
import { ADMIN_KEY, call, createAccount, createKey, expectError, get, post } from "../helpers";
import { createPlan, customer, instanceKey, sdkKey } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";

// calls: $0.01 each; base fee $10. A budget of 11 leaves 1.00 to spend at the start of the period.
const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

async function budget(subscriptionId: string, threshold: number, fields: Record<string, unknown> = {}) {
	const response = await post("/v1/alerts", {
		subscription_id: subscriptionId,
		threshold,
		block: true,
		...fields,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string };
}

/** A subscription of one instance with a block budget of `threshold` on its total amount. */
async function budgeted(threshold = 11) {
	const { subscription, instances, account } = await customer(plan);
	const alert = await budget(subscription.id, threshold);
	return { subscription, account, agentKey: instances[0] as string, alert };
}

const reserve = (body: Record<string, unknown>, key: string = ADMIN_KEY, headers?: Record<string, string>) =>
	post("/v1/reservations", body, { key, headers });

async function held(agentKey: string, amount: number, extra: Record<string, unknown> = {}) {
	const response = await reserve({ agent_key: agentKey, amount, ...extra });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; status: string; expires_at: string; created_at: string };
}

const entitlement = async (agentKey: string) =>
	(await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await sdkKey() })).body;

async function sendAction(agentKey: string, metadata?: Record<string, unknown>) {
	const response = await post(
		"/v1/actions",
		{ agent_key: agentKey, action_type: "llm_call", metadata },
		{ key: await sdkKey() },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
}

describe("POST /v1/reservations", () => {
	it("holds an amount that fits, readable by id, and shown in the entitlement's budget", async () => {
		const { subscription, agentKey, alert } = await budgeted(11);
		const before = Date.now();
		const response = await reserve(
			{ agent_key: agentKey, amount: 0.25, ttl_seconds: 120, description: "summarise the thread" },
			await sdkKey(),
		);
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^rsv_[0-9a-z]{52}$/),
			agent_key: agentKey,
			subscription_id: subscription.id,
			amount: 0.25,
			currency: "USD",
			status: "held",
			description: "summarise the thread",
			expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
			created_at: expect.stringMatching(/Z$/),
		});
		const { created_at, expires_at } = response.body;
		expect(Date.parse(expires_at) - Date.parse(created_at)).toBe(120_000);
		expect(Date.parse(created_at)).toBeGreaterThanOrEqual(before - 5);

		const read = await get(`/v1/reservations/${response.body.id}`, { key: await createKey("read-only") });
		expect(read.status).toBe(200);
		expect(read.body).toEqual(response.body);

		expect(await entitlement(agentKey)).toEqual({
			agent_key: agentKey,
			subscription_id: subscription.id,
			allowed: true,
			blocked_by: [],
			budget: { alert_id: alert.id, threshold: 11, spent: 10, held: 0.25, available: 0.75 },
		});
	});

	it("defaults ttl_seconds to 300 and description to null", async () => {
		const { agentKey } = await budgeted();
		const reservation = await held(agentKey, 0.1);
		expect(Date.parse(reservation.expires_at) - Date.parse(reservation.created_at)).toBe(300_000);
		expect(reservation).toMatchObject({ description: null, status: "held" });
	});

	it("holds without a budget: a subscription with no block alert on the total amount", async () => {
		const { subscription, instances } = await customer(plan);
		// A block alert on a metric and a non-blocking one on the total are not budgets.
		await budget(subscription.id, 1, { metric: "calls" });
		await budget(subscription.id, 1, { block: false });
		const reservation = await held(instances[0] as string, 1000);
		expect(reservation.status).toBe("held");
		expect((await entitlement(instances[0] as string)).budget).toBeNull();
	});

	it("refuses what does not fit with 409 budget_exceeded naming each alert, and holds nothing", async () => {
		const { subscription, agentKey, alert } = await budgeted(11);
		const looser = await budget(subscription.id, 10.8);
		await held(agentKey, 0.5);
		// 10 + 0.5 + 0.4 = 10.9: fits 11, not 10.8.
		const refused = await reserve({ agent_key: agentKey, amount: 0.4 });
		const error = expectError(refused, 409, "budget_exceeded");
		expect(error.details).toEqual([
			{ alert_id: looser.id, threshold: 10.8, spent: 10, held: 0.5, requested: 0.4 },
		]);
		expect(error.message).toContain(looser.id);
		// Over both.
		const both = expectError(await reserve({ agent_key: agentKey, amount: 2 }), 409, "budget_exceeded");
		expect(both.details?.map((d: any) => d.alert_id).sort()).toEqual([alert.id, looser.id].sort());
		expect((await entitlement(agentKey)).budget).toMatchObject({
			alert_id: looser.id,
			held: 0.5,
			available: 0.3,
		});
		// Exactly up to the threshold fits.
		await held(agentKey, 0.3);
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0.8, available: 0 });
	});

	it("counts what was spent: events of the period, base fee included", async () => {
		const { agentKey } = await budgeted(11);
		for (let i = 0; i < 50; i++) await sendAction(agentKey);
		// Spent 10.50: 0.5 left.
		expect((await entitlement(agentKey)).budget).toMatchObject({ spent: 10.5, held: 0, available: 0.5 });
		expectError(await reserve({ agent_key: agentKey, amount: 0.51 }), 409, "budget_exceeded");
		await held(agentKey, 0.5);
	});

	it("refuses bad amounts, ttl and fields with 400, storing nothing", async () => {
		const { agentKey } = await budgeted();
		const cases: [Record<string, unknown>, string][] = [
			[{ amount: 0 }, "amount"],
			[{ amount: -1 }, "amount"],
			[{ amount: 1e16 }, "amount"],
			[{ amount: 0.0000000000001 }, "amount"],
			[{ amount: "1" }, "amount"],
			[{ amount: null }, "amount"],
			[{ amount: 1, ttl_seconds: 9 }, "ttl_seconds"],
			[{ amount: 1, ttl_seconds: 3601 }, "ttl_seconds"],
			[{ amount: 1, ttl_seconds: 60.5 }, "ttl_seconds"],
			[{ amount: 1, status: "settled" }, ""],
			[{ amount: 1, description: "" }, "description"],
		];
		for (const [fields, path] of cases) {
			const error = expectError(await reserve({ agent_key: agentKey, ...fields }), 400, "validation_error");
			if (path) expect(error.details?.[0]?.path, JSON.stringify(fields)).toBe(path);
		}
		expectError(await reserve({ amount: 1 }), 400, "validation_error");
		expectError(await reserve({ agent_key: "a b", amount: 1 }), 400, "validation_error");
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0 });
	});

	it("answers 404 for an unknown instance without registering it, 409 conflict without an active subscription", async () => {
		const unknown = instanceKey("ghost");
		const error = expectError(await reserve({ agent_key: unknown, amount: 1 }), 404, "not_found");
		expect(error.message).toContain(unknown);
		const registered = await env.DB.prepare("SELECT count(*) AS n FROM agent_instances WHERE key = ?")
			.bind(unknown)
			.first<{ n: number }>();
		expect(registered?.n).toBe(0);

		// An instance known from its events, in no subscription.
		const lone = instanceKey("lone");
		await sendAction(lone);
		expectError(await reserve({ agent_key: lone, amount: 1 }), 409, "conflict");

		// A live instance is unknown to a key of the test environment.
		const { agentKey: live } = await budgeted();
		expectError(await reserve({ agent_key: live, amount: 1 }, await sdkKey("test")), 404, "not_found");
		expect((await entitlement(live)).budget).toMatchObject({ held: 0 });

		// One that left its subscription.
		const { subscription, agentKey } = await budgeted();
		const cancel = await post(`/v1/subscriptions/${subscription.id}/cancel`);
		expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
		expectError(await reserve({ agent_key: agentKey, amount: 1 }), 409, "conflict");
	});

	it("is for SDK keys and read-write API keys; read-only keys may only read", async () => {
		const { agentKey } = await budgeted();
		const readOnly = await createKey("read-only");
		expectError(await reserve({ agent_key: agentKey, amount: 0.1 }, readOnly), 403, "forbidden");
		const reservation = await held(agentKey, 0.1);
		expectError(
			await post(`/v1/reservations/${reservation.id}/release`, undefined, { key: readOnly }),
			403,
			"forbidden",
		);
		expect((await get(`/v1/reservations/${reservation.id}`, { key: await sdkKey() })).status).toBe(200);
		const rw = await createKey("read-write");
		expect((await reserve({ agent_key: agentKey, amount: 0.1 }, rw)).status).toBe(201);
		const released = await post(`/v1/reservations/${reservation.id}/release`, undefined, {
			key: await sdkKey(),
		});
		expect(released.status).toBe(200);
	});

	it("replays an Idempotency-Key with the same reservation, holding once", async () => {
		const { agentKey } = await budgeted();
		const headers = { "Idempotency-Key": `rsv-${crypto.randomUUID()}` };
		const first = await reserve({ agent_key: agentKey, amount: 0.2 }, ADMIN_KEY, headers);
		const again = await reserve({ agent_key: agentKey, amount: 0.2 }, ADMIN_KEY, headers);
		expect(first.status).toBe(201);
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0.2 });
	});
});

describe("GET /v1/reservations/{reservation_id}", () => {
	it("answers 404 for an unknown id, an id of an unknown subscription, and another environment's", async () => {
		const { subscription, agentKey } = await budgeted();
		const reservation = await held(agentKey, 0.1);
		for (const id of [
			"rsv_nope",
			"sub_01jd0000000000000000000000",
			`rsv_01jd0000000000000000000000${"0".repeat(26)}`,
			`rsv_01jd0000000000000000000000${subscription.id.slice(4)}`,
		]) {
			expectError(await get(`/v1/reservations/${id}`), 404, "not_found");
			expectError(await post(`/v1/reservations/${id}/release`), 404, "not_found");
		}
		const testKey = await createKey("read-write", "test");
		expectError(await get(`/v1/reservations/${reservation.id}`, { key: testKey }), 404, "not_found");
		expectError(
			await post(`/v1/reservations/${reservation.id}/release`, undefined, { key: testKey }),
			404,
			"not_found",
		);
		expect((await get(`/v1/reservations/${reservation.id}`)).body.status).toBe("held");
	});
});

describe("how a hold ends", () => {
	it("released: 200 once, then 409; what it held is available again", async () => {
		const { agentKey } = await budgeted(11);
		const reservation = await held(agentKey, 0.6);
		expectError(await reserve({ agent_key: agentKey, amount: 0.6 }), 409, "budget_exceeded");
		const released = await post(`/v1/reservations/${reservation.id}/release`);
		expect(released.status).toBe(200);
		expect(released.body).toEqual({ ...reservation, status: "released" });
		expect((await get(`/v1/reservations/${reservation.id}`)).body.status).toBe("released");
		const again = expectError(await post(`/v1/reservations/${reservation.id}/release`), 409, "conflict");
		expect(again.message).toContain("released");
		expectError(
			await post(`/v1/reservations/${reservation.id}/release`, { reason: "x" }),
			400,
			"validation_error",
		);
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0, available: 1 });
		await held(agentKey, 0.6);
	});

	it("settled by the event that names it: the hold becomes the event's spend", async () => {
		const { agentKey } = await budgeted(11);
		const reservation = await held(agentKey, 0.5);
		await sendAction(agentKey, { reservation_id: reservation.id });
		expect((await get(`/v1/reservations/${reservation.id}`)).body.status).toBe("settled");
		expect((await entitlement(agentKey)).budget).toMatchObject({ spent: 10.01, held: 0, available: 0.99 });
		expectError(await post(`/v1/reservations/${reservation.id}/release`), 409, "conflict");
		// A second event naming it, or one naming an unknown id, is counted as usual and settles nothing.
		await sendAction(agentKey, { reservation_id: reservation.id });
		await sendAction(agentKey, { reservation_id: "rsv_unknown" });
		const other = await held(agentKey, 0.1);
		await post(`/v1/reservations/${other.id}/release`);
		await sendAction(agentKey, { reservation_id: other.id });
		expect((await get(`/v1/reservations/${other.id}`)).body.status).toBe("released");
		expect((await entitlement(agentKey)).budget).toMatchObject({ spent: 10.04, held: 0 });
	});

	it("settled by an event in a batch and by an outcome too", async () => {
		const { agentKey } = await budgeted(11);
		const first = await held(agentKey, 0.1);
		const second = await held(agentKey, 0.1);
		const batch = await post(
			"/v1/actions/batch",
			{ events: [{ agent_key: agentKey, action_type: "llm_call", metadata: { reservation_id: first.id } }] },
			{ key: await sdkKey() },
		);
		expect(batch.status).toBe(201);
		const outcome = await post(
			"/v1/outcomes",
			{ agent_key: agentKey, outcome_type: "done", value: 1, metadata: { reservation_id: second.id } },
			{ key: await sdkKey() },
		);
		expect(outcome.status).toBe(201);
		expect((await get(`/v1/reservations/${first.id}`)).body.status).toBe("settled");
		expect((await get(`/v1/reservations/${second.id}`)).body.status).toBe("settled");
	});

	it("expired at expires_at: no longer held, cannot be released or settled", async () => {
		const { subscription, agentKey } = await budgeted(11);
		const reservation = await held(agentKey, 0.7, { ttl_seconds: 10 });
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0.7 });
		// As if ten seconds had passed.
		await runInDurableObject(subscriptionAccumulator(subscription.id), (_, state) => {
			state.storage.sql.exec(
				"UPDATE reservations SET expires_at = ? WHERE id = ?",
				Date.now() - 1,
				reservation.id,
			);
		});
		expect((await get(`/v1/reservations/${reservation.id}`)).body).toMatchObject({ status: "expired" });
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0, available: 1 });
		expectError(await post(`/v1/reservations/${reservation.id}/release`), 409, "conflict");
		await sendAction(agentKey, { reservation_id: reservation.id });
		expect((await get(`/v1/reservations/${reservation.id}`)).body.status).toBe("expired");
		// The next reservation writes it down.
		await held(agentKey, 0.7);
		const stored = await runInDurableObject(subscriptionAccumulator(subscription.id), (_, state) =>
			state.storage.sql
				.exec<{ status: string }>("SELECT status FROM reservations WHERE id = ?", reservation.id)
				.one(),
		);
		expect(stored.status).toBe("expired");
	});
});

describe("GET /v1/entitlements budget", () => {
	it("is the tightest budget; allowed is false once nothing is available", async () => {
		const { subscription, agentKey } = await budgeted(12);
		const tighter = await budget(subscription.id, 11.5);
		expect(await entitlement(agentKey)).toMatchObject({
			allowed: true,
			budget: { alert_id: tighter.id, threshold: 11.5, spent: 10, held: 0, available: 1.5 },
		});
		await held(agentKey, 1.5);
		expect(await entitlement(agentKey)).toMatchObject({
			allowed: false,
			blocked_by: [],
			budget: { alert_id: tighter.id, held: 1.5, available: 0 },
		});
	});
});

describe("concurrency", () => {
	async function race(agentKeys: string[], count: number, amount: number) {
		const key = await sdkKey();
		const responses = await Promise.all(
			Array.from({ length: count }, (_, i) =>
				reserve({ agent_key: agentKeys[i % agentKeys.length], amount }, key),
			),
		);
		for (const r of responses) expect([201, 409], JSON.stringify(r.body)).toContain(r.status);
		for (const r of responses.filter((r) => r.status === 409))
			expect(r.body.error.code).toBe("budget_exceeded");
		return responses.filter((r) => r.status === 201).length;
	}

	it("100 reservations at once against a budget of 10× their amount hold exactly 10", async () => {
		const { agentKey } = await budgeted(10 + 10 * 0.07);
		expect(await race([agentKey], 100, 0.07)).toBe(10);
		expect((await entitlement(agentKey)).budget).toMatchObject({ held: 0.7, available: 0 });
	});

	it("30 at once from three instances of one subscription hold exactly what fits", async () => {
		const { subscription, instances } = await customer(plan, { instances: 3 });
		await budget(subscription.id, 10 + 15 * 0.1);
		expect(await race(instances, 30, 0.1)).toBe(15);
		expect((await entitlement(instances[1] as string)).budget).toMatchObject({ held: 1.5, available: 0 });
	});

	it("holds exactly 10 of 100 on a subscription of 8 shards, from instances of every shard", async () => {
		const keys: string[] = [];
		while (new Set(keys.map((k) => shardOf(k, 8))).size < 8) keys.push(instanceKey("hot"));
		const ratePlan = await createPlan(plan);
		const account = await createAccount(undefined, { currency: "USD" });
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: ratePlan.id,
			agent_instance_ids: keys,
			shards: 8,
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		await budget(created.body.id, 10 + 10 * 0.07);
		expect(await race(keys, 100, 0.07)).toBe(10);
		const head = accumulatorStub(env, subscriptionAccumulators("live", created.body.id, 8)[0] as string);
		const rows = await runInDurableObject(head, (_, state) =>
			state.storage.sql
				.exec<{ n: number }>("SELECT count(*) AS n FROM reservations WHERE status = 'held'")
				.one(),
		);
		expect(rows.n).toBe(10);
	});
});

describe("a sharded subscription", () => {
	it("settles a hold from another shard's report, with the event's spend in the same step", async () => {
		const keys: string[] = [];
		while (!keys.some((k) => shardOf(k, 4) !== 0)) keys.push(instanceKey("far"));
		const far = keys.find((k) => shardOf(k, 4) !== 0) as string;
		const ratePlan = await createPlan(plan);
		const account = await createAccount(undefined, { currency: "USD" });
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: ratePlan.id,
			agent_instance_ids: keys,
			shards: 4,
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		await budget(created.body.id, 11);
		const reservation = await held(far, 0.5);
		await sendAction(far, { reservation_id: reservation.id });
		// Until the shard reports, the hold stands for the event.
		expect((await entitlement(far)).budget).toMatchObject({ spent: 10, held: 0.5 });
		const shard = accumulatorStub(
			env,
			accumulatorName("live", { subscriptionId: created.body.id, shard: shardOf(far, 4) }),
		);
		await runDurableObjectAlarm(shard);
		expect((await get(`/v1/reservations/${reservation.id}`)).body.status).toBe("settled");
		expect((await entitlement(far)).budget).toMatchObject({ spent: 10.01, held: 0, available: 0.99 });
		// The shard forgot what it sent.
		const pending = await runInDurableObject(shard, (_, state) =>
			state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM reservation_settlements").one(),
		);
		expect(pending.n).toBe(0);
	});
});

describe("the OpenAPI document", () => {
	it("describes the reservation routes and budget_exceeded", async () => {
		const doc = (await call("GET", "/v1/openapi.json", { key: null })).body;
		expect(Object.keys(doc.paths)).toEqual(
			expect.arrayContaining([
				"/v1/reservations",
				"/v1/reservations/{reservation_id}",
				"/v1/reservations/{reservation_id}/release",
			]),
		);
		expect(doc.paths["/v1/reservations"].post.responses["201"]).toBeDefined();
		expect(JSON.stringify(doc.components.schemas.Error)).toContain("budget_exceeded");
		expect(JSON.stringify(doc.components.schemas.Entitlement)).toContain("available");
	});
});
