import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectError, get, post } from "../helpers";
import {
	outboxEvents,
	sendAction,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

describe("POST /v1/actions/batch", () => {
	it("records every event and answers the results in request order", async () => {
		const { subscription, keys } = await subscribe();
		const subscribed = keys[0] as string;
		const loose = uniqueKey();
		const earlier = await sendAction({ agent_key: subscribed, idempotency_key: `seen-${subscribed}` });
		const events = [
			{ agent_key: loose, action_type: "search" },
			{ agent_key: subscribed, action_type: "llm_call", metadata: { tokens: 7 } },
			{ agent_key: subscribed, action_type: "llm_call", idempotency_key: `seen-${subscribed}` },
			{ agent_key: loose, action_type: "search", idempotency_key: "twice" },
			{ agent_key: loose, action_type: "search", idempotency_key: "twice" },
		];
		const response = await post("/v1/actions/batch", { events });
		expect(response.status).toBe(201);
		expect(response.body.processed).toBe(3);
		expect(response.body.duplicates).toBe(2);
		const results = response.body.results;
		expect(results.map((r: { status: string }) => r.status)).toEqual([
			"processed",
			"processed",
			"duplicate",
			"processed",
			"duplicate",
		]);
		expect(results.map((r: { agent_key: string }) => r.agent_key)).toEqual(events.map((e) => e.agent_key));
		expect(results[2].id).toBe(earlier.body.id);
		expect(results[4].id).toBe(results[3].id);
		expect(results[1]).toMatchObject({ subscription_id: subscription.id, metadata: { tokens: 7 } });
		expect(results[0]).toMatchObject({ subscription_id: null, action_type: "search" });
		const usage = await get(`/v1/usage?agent_key=${loose}`);
		expect(usage.body.usage).toEqual([{ kind: "action", type: "search", count: 2, value: null }]);
	});

	it("stores nothing when one event is invalid, and names it", async () => {
		const agentKey = uniqueKey();
		const events = Array.from({ length: 5 }, () => ({ agent_key: agentKey, action_type: "llm_call" }));
		const bad = [...events];
		bad[3] = {
			...events[3],
			timestamp: new Date(Date.now() + 3_600_000).toISOString(),
		} as (typeof events)[number];
		const error = expectError(await post("/v1/actions/batch", { events: bad }), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toEqual(["events[3].timestamp"]);
		expect((await get(`/v1/usage?agent_key=${agentKey}`)).body.usage).toEqual([]);
		const registered = await env.DB.prepare("SELECT count(*) AS n FROM agent_instances WHERE key = ?")
			.bind(agentKey)
			.first();
		expect(registered?.n).toBe(0);
	});

	it.each([
		["no events", { events: [] }, "events"],
		[
			"more than 1,000 events",
			{ events: Array.from({ length: 1001 }, () => ({ agent_key: "k", action_type: "a" })) },
			"events",
		],
		["an unknown field", { events: [{ agent_key: "k", action_type: "a" }], extra: 1 }, "extra"],
		[
			"an outcome in an action batch",
			{ events: [{ agent_key: "k", outcome_type: "a", value: 1 }] },
			"events[0].action_type",
		],
	])("answers 400 for %s", async (_, body, path) => {
		const error = expectError(await post("/v1/actions/batch", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
	});

	it("takes 1,000 events spread over many instances", async () => {
		const prefix = uniqueKey("many");
		const events = Array.from({ length: 1000 }, (_, i) => ({
			agent_key: `${prefix}-${i % 40}`,
			action_type: "llm_call",
			metadata: { tokens: i },
		}));
		const response = await post("/v1/actions/batch", { events });
		expect(response.status).toBe(201);
		expect(response.body.processed).toBe(1000);
		const usage = await get(`/v1/usage?agent_key=${prefix}-7`);
		expect(usage.body.usage).toEqual([{ kind: "action", type: "llm_call", count: 25, value: null }]);
	});
});

describe("POST /v1/outcomes/batch", () => {
	it("records outcomes and emits outcome.completed for each new one", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		const response = await post("/v1/outcomes/batch", {
			events: [
				{ agent_key: agentKey, outcome_type: "hire", value: 100, idempotency_key: "o1" },
				{ agent_key: agentKey, outcome_type: "hire", value: 250.25 },
				{ agent_key: agentKey, outcome_type: "hire", value: 100, idempotency_key: "o1" },
			],
		});
		expect(response.status).toBe(201);
		expect(response.body).toMatchObject({ processed: 2, duplicates: 1 });
		expect(response.body.results[1]).toMatchObject({
			outcome_type: "hire",
			value: 250.25,
			status: "processed",
		});
		await subscriptionAccumulator(subscription.id).flush();
		const events = await outboxEvents("outcome.completed", (d) => d.subscription_id === subscription.id);
		expect(events.map((e) => e.data.outcome_id).sort()).toEqual(
			[response.body.results[0].id, response.body.results[1].id].sort(),
		);
		// 100 + 250.25 = 350.25; the duplicate is not added.
		const usage = await get(`/v1/usage?agent_key=${agentKey}`);
		expect(usage.body.usage).toEqual([{ kind: "outcome", type: "hire", count: 2, value: 350.25 }]);
	});

	it("answers 400 with the path of a bad value", async () => {
		const error = expectError(
			await post("/v1/outcomes/batch", {
				events: [
					{ agent_key: "k", outcome_type: "hire", value: 1 },
					{ agent_key: "k", outcome_type: "hire", value: -1 },
				],
			}),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toEqual(["events[1].value"]);
	});
});
