/**
 * The ingest app (src/ingest-app.ts): what a new isolate answers before it imports the whole app. It takes exactly
 * the event, usage and health routes, and answers them as the whole app does — the same statuses, bodies and
 * headers, errors included — so that which app answered never shows.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createIngestApp } from "../../src/ingest-app";
import { createKey } from "../helpers";
import { subscribe, uniqueKey } from "../subscriptions/fixtures";

const ingest = createIngestApp();
const whole = createApp();

async function answer(app: { fetch: typeof whole.fetch }, request: Request) {
	const ctx = createExecutionContext();
	const response = await app.fetch(request, env, ctx);
	await waitOnExecutionContext(ctx);
	const body = await response.text();
	const headers = Object.fromEntries(
		[...response.headers].filter(
			([name]) => !["x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset"].includes(name),
		),
	);
	return { status: response.status, headers, body };
}

const request = (
	method: string,
	path: string,
	key: string,
	body?: unknown,
	headers: Record<string, string> = {},
) =>
	new Request(`https://billing.test${path}`, {
		method,
		headers: {
			Authorization: `Bearer ${key}`,
			"X-Request-Id": "req_same",
			...(body === undefined ? {} : { "Content-Type": "application/json" }),
			...headers,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});

describe("the ingest app", () => {
	it("takes the event, usage and health routes, and nothing else", () => {
		const takes = (method: string, path: string) =>
			ingest.answers(new Request(`https://billing.test${path}`, { method }));
		for (const [method, path] of [
			["POST", "/v1/actions"],
			["POST", "/v1/outcomes"],
			["POST", "/v1/actions/batch"],
			["POST", "/v1/outcomes/batch"],
			["GET", "/v1/usage"],
			["GET", "/v1/usage/unbilled"],
			["GET", "/healthz"],
		] as const) {
			expect(takes(method, path), `${method} ${path}`).toBe(true);
		}
		for (const [method, path] of [
			["GET", "/v1/actions"],
			["POST", "/v1/actions/"],
			["POST", "/v1/usage"],
			["GET", "/v1/agents"],
			["GET", "/v1/openapi.json"],
			["GET", "/docs"],
			["POST", "/mcp"],
			["GET", "/v1/invoices/inv_1/pdf"],
			["GET", "/portal/api/overview"],
			["GET", "/nowhere"],
		] as const) {
			expect(takes(method, path), `${method} ${path}`).toBe(false);
		}
	});

	it("answers events and usage as the whole app does, errors included", async () => {
		const agentKey = uniqueKey();
		await subscribe([agentKey]);
		const sdkKey = await createKey("sdk");
		const event = { agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 10 } };

		// The rate limit's remaining count and reset differ by one request between the two; all else is equal.
		// The same event twice, each with its own Idempotency-Key: 201 from each app, then the replays 200.
		for (const [key, status] of [
			["same-1", 201],
			["same-1", 200],
		] as const) {
			const headers = { "Idempotency-Key": key };
			const fromIngest = await answer(ingest.app, request("POST", "/v1/actions", sdkKey, event, headers));
			expect(fromIngest.status).toBe(status);
			const replay = await answer(whole, request("POST", "/v1/actions", sdkKey, event, headers));
			expect(replay.status).toBe(200);
			expect(JSON.parse(replay.body)).toEqual(JSON.parse(fromIngest.body));
		}

		for (const [method, path, body] of [
			["GET", `/v1/usage?agent_key=${agentKey}`, undefined],
			["GET", `/v1/usage/unbilled?agent_key=${agentKey}`, undefined],
			["GET", "/v1/usage?billing_period=2026-13", undefined],
			["POST", "/v1/actions", { ...event, action_type: "" }],
			["POST", "/v1/actions/batch", { events: [event, { agent_key: agentKey }] }],
			["POST", "/v1/outcomes", { agent_key: "unknown-instance", outcome_type: "hire" }],
			["GET", "/healthz", undefined],
		] as const) {
			const fromIngest = await answer(ingest.app, request(method, path, sdkKey, body));
			const fromWhole = await answer(whole, request(method, path, sdkKey, body));
			expect(fromIngest, `${method} ${path}`).toEqual(fromWhole);
		}
	});
});
