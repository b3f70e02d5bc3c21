import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { archivedEvents } from "../events/fixtures";
import { createAgent, createKey, expectError, get } from "../helpers";
import {
	instanceAccumulator,
	outboxEvents,
	sendAction,
	sendOutcome,
	subscribe,
	subscriptionAccumulator,
	uniqueKey,
} from "../subscriptions/fixtures";

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("POST /v1/actions", () => {
	it("answers 201 with the event, attributed to the instance's subscription", async () => {
		const { subscription, keys } = await subscribe();
		const response = await sendAction({ agent_key: keys[0], metadata: { tokens: 120, model: "small" } });
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^act_[0-9a-z]{26}$/),
			status: "processed",
			created_at: expect.stringMatching(ISO_MS),
			agent_key: keys[0],
			action_type: "llm_call",
			metadata: { tokens: 120, model: "small" },
			timestamp: response.body.created_at,
			subscription_id: subscription.id,
		});
	});

	it("normalises a timestamp with an offset to UTC with milliseconds", async () => {
		// One hour ago, written as local time in UTC+02:00.
		const instant = Date.now() - 3_600_000;
		const offset = `${new Date(instant + 2 * 3_600_000).toISOString().slice(0, 23)}+02:00`;
		const response = await sendAction({ agent_key: uniqueKey(), timestamp: offset });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.timestamp).toBe(new Date(instant).toISOString());
	});

	it("registers an unknown agent key, unassigned or assigned to the agent of that id, and never refuses it", async () => {
		const unknown = uniqueKey();
		const response = await sendAction({ agent_key: unknown });
		expect(response.status).toBe(201);
		expect(response.body.subscription_id).toBeNull();
		const agent = await createAgent();
		expect((await sendAction({ agent_key: agent.id })).status).toBe(201);
		const rows = await env.DB.prepare("SELECT key, agent_id FROM agent_instances WHERE key IN (?, ?)")
			.bind(unknown, agent.id)
			.all();
		expect(rows.results).toEqual(
			expect.arrayContaining([
				{ key: unknown, agent_id: null },
				{ key: agent.id, agent_id: agent.id },
			]),
		);
		// Recorded and shown, though never billed: its own accumulator counted it.
		expect((await get(`/v1/usage?agent_key=${unknown}`)).body.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 1, value: null },
		]);
		expect(await runDurableObjectAlarm(instanceAccumulator(unknown))).toBe(true);
		const archived = await archivedEvents(`live:inst:${unknown}`);
		expect(archived.map((event) => [event.id, event.subscription_id, event.billable])).toEqual([
			[response.body.id, null, false],
		]);
	});

	it("may be called with an SDK key of either environment, which keeps its events apart", async () => {
		const agentKey = uniqueKey();
		const liveSdk = await createKey("sdk", "live");
		const testSdk = await createKey("sdk", "test");
		expect((await sendAction({ agent_key: agentKey }, { key: liveSdk })).status).toBe(201);
		expect((await sendAction({ agent_key: agentKey }, { key: testSdk })).status).toBe(201);
		expect((await sendAction({ agent_key: agentKey }, { key: testSdk })).status).toBe(201);
		const live = await get(`/v1/usage?agent_key=${agentKey}`, { key: liveSdk });
		const test = await get(`/v1/usage?agent_key=${agentKey}`, { key: testSdk });
		expect(live.body.usage[0].count).toBe(1);
		expect(test.body.usage[0].count).toBe(2);
	});

	it("is forbidden to read-only API keys", async () => {
		expectError(
			await sendAction({ agent_key: uniqueKey() }, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
	});
});

describe("POST /v1/outcomes", () => {
	it("answers 201 with the outcome and emits outcome.completed through the flush", async () => {
		const { subscription, account, keys } = await subscribe();
		const timestamp = new Date(Date.now() - 60_000).toISOString();
		const response = await sendOutcome({
			agent_key: keys[0],
			value: 1250.75,
			metadata: { deal: "D-1" },
			timestamp,
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^out_[0-9a-z]{26}$/),
			status: "processed",
			created_at: expect.stringMatching(ISO_MS),
			agent_key: keys[0],
			outcome_type: "hire",
			value: 1250.75,
			metadata: { deal: "D-1" },
			timestamp,
			subscription_id: subscription.id,
		});
		await subscriptionAccumulator(subscription.id).flush();
		const events = await outboxEvents("outcome.completed", (d) => d.outcome_id === response.body.id);
		expect(events.map((e) => e.data)).toEqual([
			{
				outcome_id: response.body.id,
				agent_key: keys[0],
				outcome_type: "hire",
				value: 1250.75,
				subscription_id: subscription.id,
				account_id: account.id,
				timestamp,
			},
		]);
	});

	it("emits outcome.completed with null subscription and account for an instance without a subscription", async () => {
		const agentKey = uniqueKey();
		const response = await sendOutcome({ agent_key: agentKey, value: 0 });
		expect(response.status).toBe(201);
		await instanceAccumulator(agentKey).flush();
		const [event] = await outboxEvents("outcome.completed", (d) => d.outcome_id === response.body.id);
		expect(event?.data).toMatchObject({ subscription_id: null, account_id: null, value: 0 });
	});
});
