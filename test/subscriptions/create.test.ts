import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, createAgent, createKey, del, expectError, get, post } from "../helpers";
import { createPlan, outboxEvents, subscribe, subscriptionAccumulator, uniqueKey } from "./fixtures";

describe("POST /v1/subscriptions", () => {
	it("creates an active subscription and stores it with its plan history and memberships", async () => {
		const account = await createAccount();
		const plan = await createPlan();
		const keys = [uniqueKey(), uniqueKey()];
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [...keys, keys[0]],
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		const sub = response.body;
		expect(sub).toEqual({
			id: expect.stringMatching(/^sub_[0-9a-z]{26}$/),
			account_id: account.id,
			rate_plan_id: plan.id,
			rate_plan_version: 1,
			pending_rate_plan_id: null,
			pending_plan_change: null,
			agent_instance_ids: keys,
			status: "active",
			started_at: sub.created_at,
			cancelled_at: null,
			cancel_at: null,
			shards: 1,
			billing_currency: "USD",
			price_overrides: [],
			pending_price_overrides: null,
			discount: null,
			invoicing_threshold: null,
			created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
		});

		const history = await env.DB.prepare(
			"SELECT effective_period, rate_plan_id FROM subscription_plans WHERE subscription_id = ?",
		)
			.bind(sub.id)
			.all();
		expect(history.results).toEqual([
			{ effective_period: sub.created_at.slice(0, 7), rate_plan_id: plan.id },
		]);
		const memberships = await env.DB.prepare(
			"SELECT agent_key, removed_at FROM subscription_instances WHERE subscription_id = ? ORDER BY id",
		)
			.bind(sub.id)
			.all();
		expect(memberships.results).toEqual(keys.map((agent_key) => ({ agent_key, removed_at: null })));
		expect((await get(`/v1/subscriptions/${sub.id}`)).body).toEqual(sub);
	});

	it("registers instance keys nobody registered, assigned to the agent whose id they equal", async () => {
		const agent = await createAgent();
		const unknown = uniqueKey();
		const { subscription } = await subscribe([unknown, agent.id]);
		const rows = await env.DB.prepare(
			"SELECT key, agent_id FROM agent_instances WHERE key IN (?, ?) ORDER BY key",
		)
			.bind(unknown, agent.id)
			.all();
		expect(rows.results).toEqual(
			[
				{ key: unknown, agent_id: null },
				{ key: agent.id, agent_id: agent.id },
			].sort((a, b) => (a.key < b.key ? -1 : 1)),
		);
		expect(subscription.agent_instance_ids).toEqual([unknown, agent.id]);
	});

	it("writes subscription.created to the outbox with the contract's data", async () => {
		const { subscription, account, plan, keys } = await subscribe();
		const events = await outboxEvents("subscription.created", (d) => d.subscription_id === subscription.id);
		expect(events).toHaveLength(1);
		expect(events[0]?.environment).toBe("live");
		expect(events[0]?.data).toEqual({
			subscription_id: subscription.id,
			account_id: account.id,
			rate_plan_id: plan.id,
			rate_plan_version: 1,
			pending_rate_plan_id: null,
			pending_plan_change: null,
			agent_instance_ids: keys,
			status: "active",
			billing_currency: "USD",
		});
	});

	it("tells the subscription's accumulator that it holds the instances, before answering", async () => {
		const { subscription, keys } = await subscribe();
		const holdings = await subscriptionAccumulator(subscription.id).holdings();
		expect(holdings.map((h) => [h.agentKey, h.held])).toEqual([[keys[0], true]]);
	});

	it("answers 404 naming the unknown account or plan", async () => {
		const account = await createAccount();
		const plan = await createPlan();
		const noAccount = await post("/v1/subscriptions", {
			account_id: "acct_missing",
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
		});
		expect(expectError(noAccount, 404, "not_found").message).toContain("account");
		const noPlan = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: "plan_missing",
			agent_instance_ids: [uniqueKey()],
		});
		expect(expectError(noPlan, 404, "not_found").message).toContain("rate plan");
	});

	it("answers 409 for an archived plan", async () => {
		const account = await createAccount();
		const plan = await createPlan();
		expect((await del(`/v1/pricing/rate-plans/${plan.id}`)).status).toBe(200);
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
		});
		expect(expectError(response, 409, "conflict").message).toContain("archived");
	});

	it("bills in the account's currency by default, whatever the plan's currency (no 409)", async () => {
		const account = await createAccount(undefined, { currency: "EUR" });
		const plan = await createPlan({ currency: "USD" });
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.billing_currency).toBe("EUR");
		const row = await env.DB.prepare("SELECT billing_currency FROM subscriptions WHERE id = ?")
			.bind(response.body.id)
			.first<{ billing_currency: string }>();
		expect(row?.billing_currency).toBe("EUR");
		expect((await get(`/v1/subscriptions/${response.body.id}`)).body.billing_currency).toBe("EUR");
	});

	it("takes a billing_currency of its own on create, and keeps it", async () => {
		const account = await createAccount();
		const plan = await createPlan({ currency: "USD" });
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
			billing_currency: "JPY",
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.billing_currency).toBe("JPY");
		const listed = await get(`/v1/subscriptions?account_id=${account.id}`);
		expect(listed.body.subscriptions[0].billing_currency).toBe("JPY");
	});

	it.each([
		["lower case", "eur"],
		["not ISO 4217", "EUX"],
		["not a string", 978],
	])("refuses a billing_currency %s (400) and stores nothing", async (_, currency) => {
		const account = await createAccount();
		const plan = await createPlan();
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
			billing_currency: currency,
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain("billing_currency");
		expect((await get(`/v1/subscriptions?account_id=${account.id}`)).body.total).toBe(0);
	});

	it("answers 409 when an instance is already in another active subscription, and stores nothing", async () => {
		const { keys, subscription } = await subscribe();
		const account = await createAccount();
		const plan = await createPlan();
		const fresh = uniqueKey();
		const response = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [fresh, keys[0]],
		});
		expect(expectError(response, 409, "conflict").message).toContain(subscription.id);
		const list = await get(`/v1/subscriptions?account_id=${account.id}`);
		expect(list.body.total).toBe(0);
		const registered = await env.DB.prepare("SELECT count(*) AS n FROM agent_instances WHERE key = ?")
			.bind(fresh)
			.first();
		expect(registered?.n).toBe(0);
	});

	it("lets only one of many concurrent subscriptions take the same instance", async () => {
		const key = uniqueKey();
		const account = await createAccount();
		const plan = await createPlan();
		const responses = await Promise.all(
			Array.from({ length: 8 }, () =>
				post("/v1/subscriptions", {
					account_id: account.id,
					rate_plan_id: plan.id,
					agent_instance_ids: [key],
				}),
			),
		);
		expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
		for (const r of responses.filter((r) => r.status !== 201)) expectError(r, 409, "conflict");
		const open = await env.DB.prepare(
			"SELECT count(*) AS n FROM subscription_instances WHERE agent_key = ? AND removed_at IS NULL",
		)
			.bind(key)
			.first();
		expect(open?.n).toBe(1);
	});

	it.each([
		["an empty instance list", { agent_instance_ids: [] }, "agent_instance_ids"],
		[
			"more than 100 instances",
			{ agent_instance_ids: Array.from({ length: 101 }, (_, i) => `k${i}`) },
			"agent_instance_ids",
		],
		["an invalid instance key", { agent_instance_ids: ["has space"] }, "agent_instance_ids[0]"],
		["a missing account_id", { account_id: undefined }, "account_id"],
		["an unknown field", { status: "cancelled" }, "status"],
	])("answers 400 for %s", async (_, change, path) => {
		const body = { account_id: "acct_x", rate_plan_id: "plan_x", agent_instance_ids: ["k"], ...change };
		const error = expectError(await post("/v1/subscriptions", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("is forbidden to SDK and read-only keys", async () => {
		const body = { account_id: "acct_x", rate_plan_id: "plan_x", agent_instance_ids: ["k"] };
		expectError(await post("/v1/subscriptions", body, { key: await createKey("sdk") }), 403, "forbidden");
		expectError(
			await post("/v1/subscriptions", body, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
	});

	it("keeps environments apart: a test key cannot subscribe a live account", async () => {
		const account = await createAccount();
		const testKey = await createKey("read-write", "test");
		const plan = await createPlan({}, testKey);
		const response = await post(
			"/v1/subscriptions",
			{ account_id: account.id, rate_plan_id: plan.id, agent_instance_ids: [uniqueKey()] },
			{ key: testKey },
		);
		expect(expectError(response, 404, "not_found").message).toContain("account");
	});
});
