import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import {
	ADMIN_KEY,
	type ApiResponse,
	call,
	createKey,
	expectError,
	get,
	type KeyKind,
	post,
} from "../helpers";
import { currentPeriod, customer, instanceKey, sdkKey } from "../invoicing/fixtures";
import { dbFingerprint } from "../support/db-state";

// POST /mcp: the Streamable HTTP transport of the Model Context Protocol, stateless, answering JSON.
const ACCEPT = "application/json, text/event-stream";
const PROTOCOL = "2025-06-18";
let nextId = 1;

function mcp(
	key: string | null,
	message: unknown,
	headers: Record<string, string> = {},
): Promise<ApiResponse> {
	return call("POST", "/mcp", {
		key,
		body: message,
		headers: { Accept: ACCEPT, "MCP-Protocol-Version": PROTOCOL, ...headers },
	});
}

/** A raw body, sent as is. */
function mcpRaw(key: string, raw: string): Promise<ApiResponse> {
	return call("POST", "/mcp", {
		key,
		raw,
		headers: { Accept: ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": PROTOCOL },
	});
}

const request = (method: string, params?: unknown) => ({ jsonrpc: "2.0", id: nextId++, method, params });

async function listTools(key: string) {
	const response = await mcp(key, request("tools/list"));
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body.result.tools as { name: string; inputSchema: Record<string, any>; annotations: any }[];
}

/** tools/call as a client sends it, with a request id the REST call can repeat (error bodies quote it). */
async function callTool(key: string, name: string, args: unknown, requestId = `req_mcp_${nextId}`) {
	const response = await mcp(key, request("tools/call", { name, arguments: args }), {
		"X-Request-Id": requestId,
	});
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	const result = response.body.result as {
		content: { type: string; text: string }[];
		structuredContent?: any;
		isError?: boolean;
	};
	expect(result.content).toHaveLength(1);
	expect(result.content[0]?.type).toBe("text");
	const json = JSON.parse(result.content[0]?.text ?? "");
	expect(result.structuredContent).toEqual(json);
	return { ...result, json, response };
}

const plan = {
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

describe("the MCP handshake", () => {
	it("initializes without a session, and answers the initialized notification 202", async () => {
		const init = await mcp(
			ADMIN_KEY,
			request("initialize", {
				protocolVersion: PROTOCOL,
				capabilities: {},
				clientInfo: { name: "test", version: "1.0.0" },
			}),
		);
		expect(init.status).toBe(200);
		expect(init.headers.get("Content-Type")).toMatch(/^application\/json/);
		expect(init.headers.get("Mcp-Session-Id")).toBeNull();
		expect(init.headers.get("X-Request-Id")).toBeTruthy();
		expect(init.headers.get("X-RateLimit-Limit")).toBe("1000");
		expect(init.body).toMatchObject({
			jsonrpc: "2.0",
			result: {
				protocolVersion: PROTOCOL,
				capabilities: { tools: {} },
				serverInfo: { name: "agent-metering-billing" },
			},
		});

		const initialized = await mcp(ADMIN_KEY, { jsonrpc: "2.0", method: "notifications/initialized" });
		expect(initialized.status).toBe(202);
		expect(initialized.body).toBeNull();
	});

	it("answers GET and DELETE 405 (no server-sent stream, no session to end)", async () => {
		for (const method of ["GET", "DELETE"]) {
			const response = await call(method, "/mcp", { headers: { Accept: "text/event-stream" } });
			expectError(response, 405, "method_not_allowed");
			expect(response.headers.get("Allow")).toBe("POST");
		}
	});
});

describe("tools/list", () => {
	const expected: Record<KeyKind, string[]> = {
		sdk: [
			"check_entitlement",
			"reserve_budget",
			"release_reservation",
			"record_action",
			"record_outcome",
			"get_usage",
		],
		"read-only": ["check_entitlement", "get_usage", "simulate_price", "list_invoices", "get_margins"],
		"read-write": [
			"check_entitlement",
			"reserve_budget",
			"release_reservation",
			"record_action",
			"record_outcome",
			"get_usage",
			"simulate_price",
			"list_invoices",
			"get_margins",
		],
		admin: [
			"check_entitlement",
			"reserve_budget",
			"release_reservation",
			"record_action",
			"record_outcome",
			"get_usage",
			"simulate_price",
			"list_invoices",
			"get_margins",
		],
	};

	for (const [kind, names] of Object.entries(expected) as [KeyKind, string[]][]) {
		it(`lists what a ${kind} key may call`, async () => {
			const key = kind === "admin" ? ADMIN_KEY : await createKey(kind);
			expect((await listTools(key)).map((tool) => tool.name)).toEqual(names);
		});
	}

	it("gives each tool its REST route's input schema", async () => {
		const tools = Object.fromEntries((await listTools(ADMIN_KEY)).map((tool) => [tool.name, tool]));
		expect(tools.check_entitlement?.inputSchema).toMatchObject({
			type: "object",
			properties: { agent_key: { type: "string" } },
			required: ["agent_key"],
			additionalProperties: false,
		});
		expect(tools.record_action?.inputSchema.required).toEqual(["agent_key", "action_type"]);
		expect(Object.keys(tools.record_action?.inputSchema.properties)).toEqual(
			expect.arrayContaining(["agent_key", "action_type", "metadata", "idempotency_key"]),
		);
		expect(tools.record_outcome?.inputSchema.required).toEqual(["agent_key", "outcome_type", "value"]);
		expect(tools.record_outcome?.inputSchema.properties.value).toMatchObject({ type: "number", minimum: 0 });
		expect(Object.keys(tools.get_usage?.inputSchema.properties)).toEqual(
			expect.arrayContaining(["agent_key", "subscription_id"]),
		);
		expect(tools.get_usage?.inputSchema.required).toBeUndefined();
		// A plan or a subscription (with its negotiated prices), exactly one of them: the route says so.
		expect(tools.simulate_price?.inputSchema.required).toEqual(["usage"]);
		expect(Object.keys(tools.simulate_price?.inputSchema.properties)).toEqual(
			expect.arrayContaining(["rate_plan_id", "subscription_id", "usage"]),
		);
		expect(tools.list_invoices?.inputSchema.properties.status).toEqual({
			type: "string",
			enum: ["draft", "open", "paid", "void"],
		});
		expect(tools.reserve_budget?.inputSchema).toMatchObject({
			required: ["agent_key", "amount"],
			additionalProperties: false,
			properties: {
				amount: { type: "number", exclusiveMinimum: 0 },
				ttl_seconds: { type: "integer", minimum: 10, maximum: 3600 },
			},
		});
		expect(tools.release_reservation?.inputSchema).toMatchObject({
			properties: { reservation_id: { type: "string" } },
			required: ["reservation_id"],
			additionalProperties: false,
		});
		expect(tools.release_reservation?.annotations.readOnlyHint).toBe(false);
		expect(tools.get_margins?.inputSchema.required).toEqual(["billing_period"]);
		expect(tools.get_margins?.inputSchema.properties.group_by).toEqual({
			type: "string",
			enum: ["agent", "customer", "model", "product"],
		});
		for (const tool of Object.values(tools)) expect(tool.inputSchema.$schema).toBeUndefined();
		expect(tools.record_action?.annotations.readOnlyHint).toBe(false);
		expect(tools.check_entitlement?.annotations.readOnlyHint).toBe(true);
	});
});

describe("tools/call answers what REST answers", () => {
	it("check_entitlement, get_usage, simulate_price and list_invoices", async () => {
		const { subscription, account, instances, plan: ratePlan } = await customer(plan);
		const agentKey = instances[0] as string;
		await post("/v1/actions", { agent_key: agentKey, action_type: "llm_call" }, { key: await sdkKey() });
		const sdk = await sdkKey();

		const cases: [string, string, Record<string, unknown>, () => Promise<ApiResponse>][] = [
			[
				"check_entitlement",
				sdk,
				{ agent_key: agentKey },
				() => get(`/v1/entitlements?agent_key=${agentKey}`, { key: sdk }),
			],
			["get_usage", sdk, { agent_key: agentKey }, () => get(`/v1/usage?agent_key=${agentKey}`, { key: sdk })],
			[
				"get_usage",
				ADMIN_KEY,
				{ subscription_id: subscription.id },
				() => get(`/v1/usage?subscription_id=${subscription.id}`),
			],
			[
				"simulate_price",
				ADMIN_KEY,
				{ rate_plan_id: ratePlan.id, usage: { calls: 1234 } },
				() => post("/v1/pricing/simulate", { rate_plan_id: ratePlan.id, usage: { calls: 1234 } }),
			],
			[
				"list_invoices",
				ADMIN_KEY,
				{ account_id: account.id, status: "open", limit: 5 },
				() => get(`/v1/invoices?account_id=${account.id}&status=open&limit=5`),
			],
			[
				"get_margins",
				ADMIN_KEY,
				{ billing_period: currentPeriod(), group_by: "customer" },
				() => get(`/v1/reports/margins?billing_period=${currentPeriod()}&group_by=customer`),
			],
		];
		for (const [name, key, args, rest] of cases) {
			const tool = await callTool(key, name, args);
			const expected = await rest();
			expect(expected.status, name).toBe(200);
			expect(tool.isError, name).toBeUndefined();
			expect(tool.json, name).toEqual(expected.body);
		}
	});

	it("record_action and record_outcome store the event REST would, once per idempotency key", async () => {
		const agentKey = instanceKey();
		const sdk = await sdkKey();
		const action = {
			agent_key: agentKey,
			action_type: "llm_call",
			metadata: { model: "m" },
			idempotency_key: "a-1",
		};
		const recorded = await callTool(sdk, "record_action", action);
		expect(recorded.isError).toBeUndefined();
		expect(recorded.json).toMatchObject({ id: expect.stringMatching(/^act_/), agent_key: agentKey });
		const replay = await post("/v1/actions", action, { key: sdk });
		expect(replay.status).toBe(200);
		expect(replay.body).toEqual(recorded.json);

		const outcome = { agent_key: agentKey, outcome_type: "lead", value: 12.5, idempotency_key: "o-1" };
		const outcomeRecorded = await callTool(sdk, "record_outcome", outcome);
		expect(outcomeRecorded.json).toMatchObject({ id: expect.stringMatching(/^out_/), value: 12.5 });
		const outcomeReplay = await post("/v1/outcomes", outcome, { key: sdk });
		expect(outcomeReplay.status).toBe(200);
		expect(outcomeReplay.body).toEqual(outcomeRecorded.json);

		// A repeat through MCP is the REST replay too: nothing counted twice.
		expect((await callTool(sdk, "record_action", action)).json).toEqual(recorded.json);
		const usage = await get(`/v1/usage?agent_key=${agentKey}`, { key: sdk });
		expect(usage.body.usage).toEqual([
			{ kind: "action", type: "llm_call", count: 1, value: null },
			{ kind: "outcome", type: "lead", count: 1, value: 12.5 },
		]);
	});
});

describe("reserve_budget and release_reservation", () => {
	const budgetPlan = { base_fee: 10, charges: plan.charges };

	it("hold and release what REST would, with REST's errors as isError results", async () => {
		const { subscription, instances } = await customer(budgetPlan);
		const agentKey = instances[0] as string;
		const alert = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 11, block: true });
		expect(alert.status).toBe(201);
		const sdk = await sdkKey();

		const reserved = await callTool(sdk, "reserve_budget", {
			agent_key: agentKey,
			amount: 0.75,
			ttl_seconds: 60,
		});
		expect(reserved.isError).toBeUndefined();
		expect(reserved.json).toMatchObject({ agent_key: agentKey, amount: 0.75, status: "held" });
		const id = reserved.json.id as string;
		expect((await get(`/v1/reservations/${id}`, { key: sdk })).body).toEqual(reserved.json);

		// Over budget: the REST 409 body, details included.
		const requestId = `req_over_${nextId}`;
		const over = await callTool(sdk, "reserve_budget", { agent_key: agentKey, amount: 0.5 }, requestId);
		expect(over.isError).toBe(true);
		expect(over.json.error).toMatchObject({
			code: "budget_exceeded",
			request_id: requestId,
			details: [{ alert_id: alert.body.id, threshold: 11, spent: 10, held: 0.75, requested: 0.5 }],
		});

		const released = await callTool(sdk, "release_reservation", { reservation_id: id });
		expect(released.isError).toBeUndefined();
		expect(released.json).toEqual({ ...reserved.json, status: "released" });
		const again = await callTool(sdk, "release_reservation", { reservation_id: id }, "req_again");
		expect(again.isError).toBe(true);
		expect(again.json.error).toMatchObject({ code: "conflict", request_id: "req_again" });
		const rest = await post(`/v1/reservations/${id}/release`, undefined, {
			key: sdk,
			headers: { "X-Request-Id": "req_again" },
		});
		expect(again.json).toEqual(rest.body);

		const unknown = await callTool(sdk, "release_reservation", { reservation_id: "rsv_nope" });
		expect(unknown.json.error).toMatchObject({ code: "not_found" });
		const missing = await callTool(sdk, "release_reservation", {}, "req_no_id");
		expect(missing.isError).toBe(true);
		expect(missing.json.error).toMatchObject({
			code: "validation_error",
			request_id: "req_no_id",
			details: [{ path: "reservation_id" }],
		});
		const extra = await callTool(sdk, "release_reservation", { reservation_id: id, reason: "x" });
		expect(extra.json.error).toMatchObject({ code: "validation_error" });
		const bad = await callTool(sdk, "reserve_budget", { agent_key: agentKey, amount: 0 });
		expect(bad.json.error).toMatchObject({ code: "validation_error", details: [{ path: "amount" }] });
		const readOnly = await callTool(await createKey("read-only"), "reserve_budget", {
			agent_key: agentKey,
			amount: 0.1,
		});
		expect(readOnly.json.error).toMatchObject({ code: "forbidden" });
	});
});

describe("errors", () => {
	it("answers invalid arguments with the REST 400 body as an isError result, storing nothing", async () => {
		const sdk = await sdkKey();
		const agentKey = instanceKey();
		const before = await dbFingerprint();
		const cases: [string, Record<string, unknown>, string, unknown][] = [
			["record_action", { agent_key: agentKey }, "/v1/actions", { agent_key: agentKey }],
			[
				"record_outcome",
				{ agent_key: agentKey, outcome_type: "lead", value: -1 },
				"/v1/outcomes",
				{ agent_key: agentKey, outcome_type: "lead", value: -1 },
			],
			[
				"record_action",
				{ agent_key: agentKey, action_type: "x", surprise: 1 },
				"/v1/actions",
				{ agent_key: agentKey, action_type: "x", surprise: 1 },
			],
		];
		for (const [name, args, path, body] of cases) {
			const requestId = `req_invalid_${nextId}`;
			const tool = await callTool(sdk, name, args, requestId);
			const rest = await post(path, body, { key: sdk, headers: { "X-Request-Id": requestId } });
			expectError(rest, 400, "validation_error");
			expect(tool.isError).toBe(true);
			expect(tool.json).toEqual(rest.body);
		}
		for (const args of [
			{},
			{ billing_period: "2026-13" },
			{ billing_period: "2026-01", group_by: "region" },
		]) {
			const requestId = `req_margins_${nextId}`;
			const query = new URLSearchParams(args as Record<string, string>).toString();
			const tool = await callTool(ADMIN_KEY, "get_margins", args, requestId);
			const rest = await get(`/v1/reports/margins?${query}`, { headers: { "X-Request-Id": requestId } });
			expectError(rest, 400, "validation_error");
			expect(tool.isError).toBe(true);
			expect(tool.json).toEqual(rest.body);
		}
		const forbidden = await callTool(sdk, "get_margins", { billing_period: "2026-01" });
		expect(forbidden.isError).toBe(true);
		expect(forbidden.json.error).toMatchObject({ code: "forbidden" });
		const missing = await callTool(sdk, "check_entitlement", {}, "req_missing");
		expect(missing.isError).toBe(true);
		expect(missing.json.error).toMatchObject({ code: "validation_error", request_id: "req_missing" });
		expect(await dbFingerprint()).toEqual(before);
		expect((await get(`/v1/usage?agent_key=${agentKey}`, { key: sdk })).body.usage).toEqual([]);
	});

	it("answers a tool the key may not call with the REST 403 body, and runs nothing", async () => {
		const readOnly = await createKey("read-only");
		const agentKey = instanceKey();
		const before = await dbFingerprint();
		const tool = await callTool(readOnly, "record_action", { agent_key: agentKey, action_type: "llm_call" });
		expect(tool.isError).toBe(true);
		expect(tool.json.error).toMatchObject({ code: "forbidden" });
		expect(await dbFingerprint()).toEqual(before);
		expect((await get(`/v1/usage?agent_key=${agentKey}`, { key: await sdkKey() })).body.usage).toEqual([]);
	});

	it("answers an unknown tool with a JSON-RPC invalid-params error", async () => {
		const response = await mcp(ADMIN_KEY, request("tools/call", { name: "book_flight", arguments: {} }));
		expect(response.status).toBe(200);
		expect(response.body.error).toMatchObject({
			code: -32602,
			message: expect.stringContaining("book_flight"),
		});
		expect(response.body.result).toBeUndefined();
	});

	it("answers an unknown method with a JSON-RPC method-not-found error", async () => {
		const response = await mcp(ADMIN_KEY, request("resources/list"));
		expect(response.status).toBe(200);
		expect(response.body.error.code).toBe(-32601);
	});

	it("refuses malformed JSON-RPC with 400: -32700 for bad JSON, -32600 for what is not one message", async () => {
		const before = await dbFingerprint();
		const parse = await mcpRaw(ADMIN_KEY, '{"jsonrpc": "2.0", ');
		expect(parse.status).toBe(400);
		expect(parse.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
		expect(parse.headers.get("X-Request-Id")).toBeTruthy();
		expect(parse.headers.get("X-RateLimit-Remaining")).toBeTruthy();
		for (const raw of [
			'{"hello": "world"}',
			'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
			'"tools/list"',
			"[]",
			JSON.stringify([request("tools/list"), request("tools/list")]),
		]) {
			const response = await mcpRaw(ADMIN_KEY, raw);
			expect(response.status, raw).toBe(400);
			expect(response.body, raw).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
		}
		const tooLarge = await mcp(
			ADMIN_KEY,
			request("tools/call", {
				name: "record_action",
				arguments: { agent_key: "k", action_type: "a", metadata: { pad: "x".repeat(1024 * 1024) } },
			}),
		);
		expect(tooLarge.status).toBe(413);
		expect(tooLarge.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
		expect(await dbFingerprint()).toEqual(before);
	});

	it("refuses a body that is not JSON (415) and a client that does not accept JSON and SSE (406)", async () => {
		const text = await call("POST", "/mcp", {
			raw: "hello",
			headers: { Accept: ACCEPT, "Content-Type": "text/plain" },
		});
		expect(text.status).toBe(415);
		const accept = await mcp(ADMIN_KEY, request("tools/list"), { Accept: "application/json" });
		expect(accept.status).toBe(406);
	});
});

describe("authentication and rate limits, as /v1", () => {
	it("answers 401 without a valid key, with the REST body and WWW-Authenticate", async () => {
		for (const key of [null, "sk_api_unknown_unknown_unknown_0000"]) {
			const response = await mcp(key, request("tools/list"));
			const rest = await get("/v1/usage", { key });
			const error = expectError(response, 401, "unauthorized");
			expect(response.headers.get("WWW-Authenticate")).toBe("Bearer");
			expect(response.headers.get("X-RateLimit-Remaining")).toBeNull();
			expect(error.message).toBe(rest.body.error.message);
		}
	});

	beforeEach(async () => {
		// Counting tests must not straddle two 60-second windows.
		const intoWindow = Date.now() % 60_000;
		if (intoWindow > 57_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 50));
	});

	it("counts one MCP request once, tool calls included", async () => {
		const key = await createKey("read-write");
		const remaining = async (message: unknown) =>
			Number((await mcp(key, message)).headers.get("X-RateLimit-Remaining"));
		const first = await remaining(request("tools/list"));
		const afterCall = await remaining(request("tools/call", { name: "list_invoices", arguments: {} }));
		const afterError = await remaining(
			request("tools/call", { name: "list_invoices", arguments: { limit: 0 } }),
		);
		const afterNotification = await remaining({ jsonrpc: "2.0", method: "notifications/initialized" });
		expect([afterCall, afterError, afterNotification]).toEqual([first - 1, first - 2, first - 3]);
	});

	it("answers 429 with the rate-limit headers past the key's limit, without running the call", async () => {
		const key = await createKey("read-write");
		const agentKey = instanceKey();
		const limited = { ...env, RATE_LIMIT_API_PER_MINUTE: "2" };
		const send = async () => {
			const ctx = createExecutionContext();
			const response = await createApp().fetch(
				new Request("https://billing.test/mcp", {
					method: "POST",
					headers: {
						Authorization: `Bearer ${key}`,
						Accept: ACCEPT,
						"Content-Type": "application/json",
						"MCP-Protocol-Version": PROTOCOL,
					},
					body: JSON.stringify(
						request("tools/call", {
							name: "record_action",
							arguments: { agent_key: agentKey, action_type: "llm_call" },
						}),
					),
				}),
				limited,
				ctx,
			);
			await waitOnExecutionContext(ctx);
			return { status: response.status, headers: response.headers, body: await response.json<any>() };
		};
		expect((await send()).status).toBe(200);
		const second = await send();
		expect(second.status).toBe(200);
		expect(second.headers.get("X-RateLimit-Remaining")).toBe("0");
		const third = await send();
		expect(third.status).toBe(429);
		expect(third.body.error.code).toBe("rate_limited");
		expect(third.headers.get("X-RateLimit-Limit")).toBe("2");
		expect(third.headers.get("X-RateLimit-Remaining")).toBe("0");
		expect(Number(third.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
		expect(Number(third.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(Date.now() / 1000);
		const usage = await get(`/v1/usage?agent_key=${agentKey}`, { key: await sdkKey() });
		expect(usage.body.usage).toEqual([{ kind: "action", type: "llm_call", count: 2, value: null }]);
	});
});
