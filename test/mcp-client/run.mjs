// The MCP endpoint as an agent meets it: the official MCP client (@modelcontextprotocol/sdk's Client over
// StreamableHTTPClientTransport) against `wrangler dev` on fresh local state. Each tool's answer is compared with
// the REST answer for the same input. Run with `npm run test:mcp` (node:test; about a minute, mostly wrangler's
// start). See docs/mcp.md.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { newState, client as restClient, startWorker } from "../crash/harness.mjs";

const state = newState();
let worker;
let admin;
const keys = {};
const clients = [];

async function connect(key) {
	const transport = new StreamableHTTPClientTransport(new URL(`${worker.base}/mcp`), {
		requestInit: { headers: { Authorization: `Bearer ${key}` } },
	});
	const mcp = new Client({ name: "mcp-client-ci", version: "1.0.0" });
	await mcp.connect(transport);
	clients.push(mcp);
	return mcp;
}

async function created(response) {
	assert.ok(response.status === 201 || response.status === 200, JSON.stringify(response.body));
	return response.body;
}

/** The tool's answer as the client sees it: text and structured content agree, and are the REST JSON. */
function answerOf(result) {
	assert.equal(result.content.length, 1);
	assert.equal(result.content[0].type, "text");
	const json = JSON.parse(result.content[0].text);
	assert.deepEqual(result.structuredContent, json);
	return json;
}

const plan = {
	name: "Per call",
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

before(async () => {
	worker = await startWorker(state);
	admin = restClient(worker.base, state.adminKey);
	for (const [name, body] of [
		["sdk", { type: "sdk" }],
		["readOnly", { type: "api", permission: "read-only" }],
		["readWrite", { type: "api", permission: "read-write" }],
	]) {
		keys[name] = (await created(await admin("POST", "/v1/api-keys", body))).key;
	}
});

after(async () => {
	for (const mcp of clients) await mcp.close().catch(() => {});
	await worker?.stop();
	state.remove();
});

describe("the official MCP client", () => {
	it("connects (initialize, initialized) and lists the tools each key may call", async () => {
		const expected = {
			sdk: [
				"check_entitlement",
				"reserve_budget",
				"release_reservation",
				"record_action",
				"record_outcome",
				"get_usage",
			],
			readOnly: ["check_entitlement", "get_usage", "simulate_price", "list_invoices", "get_margins"],
			readWrite: [
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
		for (const [kind, names] of Object.entries(expected)) {
			const mcp = await connect(keys[kind]);
			assert.equal(mcp.getServerVersion()?.name, "agent-metering-billing");
			const { tools } = await mcp.listTools();
			assert.deepEqual(
				tools.map((tool) => tool.name),
				names,
				kind,
			);
			for (const tool of tools) assert.equal(tool.inputSchema.type, "object");
		}
		const adminTools = await (await connect(state.adminKey)).listTools();
		assert.equal(adminTools.tools.length, 9);
	});

	it("answers every tool as REST answers the same request", async () => {
		const ratePlan = await created(await admin("POST", "/v1/pricing/rate-plans", plan));
		const account = await created(
			await admin("POST", "/v1/accounts", { name: "Acme", email: "a@acme.test" }),
		);
		const agentKey = `mcp-ci-${Date.now()}`;
		await created(
			await admin("POST", "/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: ratePlan.id,
				agent_instance_ids: [agentKey],
			}),
		);
		const sdk = await connect(keys.sdk);
		const rest = restClient(worker.base, keys.sdk);

		const action = { agent_key: agentKey, action_type: "llm_call", idempotency_key: "ci-action-1" };
		const recorded = answerOf(await sdk.callTool({ name: "record_action", arguments: action }));
		assert.match(recorded.id, /^act_/);
		assert.deepEqual((await rest("POST", "/v1/actions", action)).body, recorded);

		const outcome = { agent_key: agentKey, outcome_type: "lead", value: 3, idempotency_key: "ci-outcome-1" };
		const outcomeRecorded = answerOf(await sdk.callTool({ name: "record_outcome", arguments: outcome }));
		assert.match(outcomeRecorded.id, /^out_/);
		assert.deepEqual((await rest("POST", "/v1/outcomes", outcome)).body, outcomeRecorded);

		const entitlement = answerOf(
			await sdk.callTool({ name: "check_entitlement", arguments: { agent_key: agentKey } }),
		);
		assert.deepEqual(entitlement, (await rest("GET", `/v1/entitlements?agent_key=${agentKey}`)).body);
		assert.equal(entitlement.allowed, true);

		const usage = answerOf(await sdk.callTool({ name: "get_usage", arguments: { agent_key: agentKey } }));
		assert.deepEqual(usage, (await rest("GET", `/v1/usage?agent_key=${agentKey}`)).body);

		// A budget of 10.00 on the total amount (this plan has no base fee): hold, settle by the event, release.
		const subscriptionId = entitlement.subscription_id;
		await created(
			await admin("POST", "/v1/alerts", { subscription_id: subscriptionId, threshold: 10, block: true }),
		);
		const reserved = answerOf(
			await sdk.callTool({ name: "reserve_budget", arguments: { agent_key: agentKey, amount: 4 } }),
		);
		assert.equal(reserved.status, "held");
		assert.deepEqual((await rest("GET", `/v1/reservations/${reserved.id}`)).body, reserved);
		const over = await sdk.callTool({
			name: "reserve_budget",
			arguments: { agent_key: agentKey, amount: 6 },
		});
		assert.equal(over.isError, true);
		assert.equal(answerOf(over).error.code, "budget_exceeded");
		assert.equal(answerOf(over).error.details[0].held, 4);
		const settling = {
			agent_key: agentKey,
			action_type: "llm_call",
			metadata: { reservation_id: reserved.id },
		};
		answerOf(await sdk.callTool({ name: "record_action", arguments: settling }));
		assert.equal((await rest("GET", `/v1/reservations/${reserved.id}`)).body.status, "settled");
		const second = answerOf(
			await sdk.callTool({
				name: "reserve_budget",
				arguments: { agent_key: agentKey, amount: 5, ttl_seconds: 30 },
			}),
		);
		const released = answerOf(
			await sdk.callTool({ name: "release_reservation", arguments: { reservation_id: second.id } }),
		);
		assert.deepEqual(released, { ...second, status: "released" });
		const twice = await sdk.callTool({
			name: "release_reservation",
			arguments: { reservation_id: second.id },
		});
		assert.equal(twice.isError, true);
		assert.equal(answerOf(twice).error.code, "conflict");

		const readOnly = await connect(keys.readOnly);
		const readRest = restClient(worker.base, keys.readOnly);
		const simulation = { rate_plan_id: ratePlan.id, usage: { calls: 1500 } };
		const priced = answerOf(await readOnly.callTool({ name: "simulate_price", arguments: simulation }));
		assert.deepEqual(priced, (await readRest("POST", "/v1/pricing/simulate", simulation)).body);

		const invoices = answerOf(
			await readOnly.callTool({ name: "list_invoices", arguments: { account_id: account.id } }),
		);
		assert.deepEqual(invoices, (await readRest("GET", `/v1/invoices?account_id=${account.id}`)).body);

		const period = new Date().toISOString().slice(0, 7);
		const margins = answerOf(
			await readOnly.callTool({
				name: "get_margins",
				arguments: { billing_period: period, group_by: "customer" },
			}),
		);
		assert.equal(margins.status, "open");
		assert.deepEqual(
			margins,
			(await readRest("GET", `/v1/reports/margins?billing_period=${period}&group_by=customer`)).body,
		);
	});

	it("answers invalid arguments with the REST 400 body, and an unknown tool with a JSON-RPC error", async () => {
		const sdk = await connect(keys.sdk);
		const invalid = await sdk.callTool({
			name: "record_outcome",
			arguments: { agent_key: "k", outcome_type: "x" },
		});
		assert.equal(invalid.isError, true);
		assert.equal(answerOf(invalid).error.code, "validation_error");

		const forbidden = await sdk.callTool({ name: "list_invoices", arguments: {} });
		assert.equal(forbidden.isError, true);
		assert.equal(answerOf(forbidden).error.code, "forbidden");

		await assert.rejects(
			sdk.callTool({ name: "no_such_tool", arguments: {} }),
			(error) => error instanceof McpError && error.code === ErrorCode.InvalidParams,
		);
	});

	it("cannot connect without a valid key (401)", async () => {
		await assert.rejects(connect("sk_api_not_a_real_key_0000000000000000"), /401|nauthorized/);
	});
});
