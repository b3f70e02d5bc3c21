import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectError, get, post } from "../helpers";
import { uniqueKey } from "../subscriptions/fixtures";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();
const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));

const actionCases: [string, Record<string, unknown>, string][] = [
	["a missing agent_key", { agent_key: undefined }, "agent_key"],
	["an agent_key with a space", { agent_key: "bad key" }, "agent_key"],
	["an agent_key over 200 characters", { agent_key: "k".repeat(201) }, "agent_key"],
	["a missing action_type", { action_type: undefined }, "action_type"],
	["an action_type with a slash", { action_type: "llm/call" }, "action_type"],
	["an action_type over 100 characters", { action_type: "a".repeat(101) }, "action_type"],
	["metadata that is an array", { metadata: [1] }, "metadata"],
	["metadata with more than 50 keys", { metadata: manyKeys }, "metadata"],
	["metadata over 8 KiB", { metadata: { text: "x".repeat(8200) } }, "metadata"],
	["a nested metadata value", { metadata: { nested: { a: 1 } } }, "metadata.nested"],
	["an array metadata value", { metadata: { list: [1, 2] } }, "metadata.list"],
	["a negative cost", { metadata: { cost: -0.01 } }, "metadata.cost"],
	["a cost given as text", { metadata: { cost: "0.5" } }, "metadata.cost"],
	["an unknown cost_currency", { metadata: { cost: 1, cost_currency: "usd" } }, "metadata.cost_currency"],
	["a cost_type that is not a string", { metadata: { cost_type: 5 } }, "metadata.cost_type"],
	["a model that is not a string", { metadata: { model: 4, input_tokens: 10 } }, "metadata.model"],
	["a provider that is not a string", { metadata: { model: "gpt-4o", provider: true } }, "metadata.provider"],
	["negative input_tokens", { metadata: { model: "gpt-4o", input_tokens: -1 } }, "metadata.input_tokens"],
	["output_tokens as text", { metadata: { model: "gpt-4o", output_tokens: "12" } }, "metadata.output_tokens"],
	["null cached_input_tokens", { metadata: { cached_input_tokens: null } }, "metadata.cached_input_tokens"],
	["negative reasoning_tokens", { metadata: { reasoning_tokens: -0.5 } }, "metadata.reasoning_tokens"],
	["a timestamp more than 5 minutes ahead", { timestamp: isoIn(6 * MINUTE) }, "timestamp"],
	["a timestamp more than 35 days old", { timestamp: isoIn(-36 * DAY) }, "timestamp"],
	["a timestamp without an offset", { timestamp: "2026-11-21T10:00:00" }, "timestamp"],
	["a timestamp that is not a date", { timestamp: "yesterday" }, "timestamp"],
	["an empty idempotency_key", { idempotency_key: "" }, "idempotency_key"],
	["an idempotency_key over 255 characters", { idempotency_key: "k".repeat(256) }, "idempotency_key"],
	["an unknown field", { customer: "x" }, "customer"],
];

const outcomeCases: [string, Record<string, unknown>, string][] = [
	["a missing value", { value: undefined }, "value"],
	["a negative value", { value: -1 }, "value"],
	["a value given as text", { value: "5" }, "value"],
	["an outcome_type with a space", { outcome_type: "a b" }, "outcome_type"],
	["a timestamp more than 5 minutes ahead", { timestamp: isoIn(6 * MINUTE) }, "timestamp"],
	["a timestamp more than 35 days old", { timestamp: isoIn(-36 * DAY) }, "timestamp"],
	["metadata with an object value", { metadata: { a: {} } }, "metadata.a"],
	["an unknown field", { action_type: "x" }, "action_type"],
];

async function storedEventsOf(agentKey: string) {
	const usage = await get(`/v1/usage?agent_key=${agentKey}`);
	const registered = await env.DB.prepare("SELECT count(*) AS n FROM agent_instances WHERE key = ?")
		.bind(agentKey)
		.first();
	return { usage: usage.body.usage, registered: registered?.n };
}

describe("POST /v1/actions validation", () => {
	it.each(actionCases)("answers 400 for %s, storing nothing", async (_, change, path) => {
		const agentKey = uniqueKey();
		const body = JSON.parse(JSON.stringify({ agent_key: agentKey, action_type: "llm_call", ...change }));
		const error = expectError(await post("/v1/actions", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
		expect(await storedEventsOf(agentKey)).toEqual({ usage: [], registered: 0 });
	});

	it("accepts the edges of the timestamp window and of the metadata limits", async () => {
		const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
		for (const extra of [
			{ timestamp: isoIn(4 * MINUTE) },
			{ timestamp: isoIn(-34 * DAY) },
			{ metadata: fifty },
			{ metadata: { text: "x".repeat(8000) } },
			{ metadata: { s: "a", n: 1.5, b: true, z: null, cost: 0, cost_currency: "EUR", cost_type: "gpu" } },
		]) {
			const response = await post("/v1/actions", {
				agent_key: uniqueKey(),
				action_type: "llm_call",
				...extra,
			});
			expect(response.status, JSON.stringify(response.body)).toBe(201);
		}
	});

	it("answers 400 for an Idempotency-Key header over 255 characters", async () => {
		const response = await post(
			"/v1/actions",
			{ agent_key: uniqueKey(), action_type: "x" },
			{ headers: { "Idempotency-Key": "k".repeat(256) } },
		);
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain("idempotency-key");
	});
});

describe("POST /v1/outcomes validation", () => {
	it.each(outcomeCases)("answers 400 for %s, storing nothing", async (_, change, path) => {
		const agentKey = uniqueKey();
		const body = JSON.parse(
			JSON.stringify({ agent_key: agentKey, outcome_type: "hire", value: 1, ...change }),
		);
		const error = expectError(await post("/v1/outcomes", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
		expect(await storedEventsOf(agentKey)).toEqual({ usage: [], registered: 0 });
	});
});
