/**
 * Black-box checks of §37's amendments to webhooks (§13/§31), the audit log (§29) and MCP (§30), from the
 * contract's text and docs/webhooks.md, docs/audit-log.md and docs/mcp.md alone: special-use host names refused on
 * create and PATCH with nothing stored; local URLs only where ALLOW_LOCAL_WEBHOOK_URLS is "true" (these tests set
 * it, as the contract says tests do); a failed test send reports a fixed error class and no runtime text; a PATCH
 * that changes nothing writes no audit record; invoice.finalized records the number; MCP errors carry the REST
 * error body once, and every tool property has one JSON Schema type.
 */
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_KEY, call, createAccount, createAgent, expectError, get, patch, post } from "../helpers";
import { createPlan, currentPeriod, generate, instanceKey, subscribe } from "../invoicing/fixtures";
import { dbFingerprint } from "../support/db-state";

const settings = env as unknown as Record<string, unknown>;
const previousAllowLocal = settings.ALLOW_LOCAL_WEBHOOK_URLS;
beforeAll(() => {
	settings.ALLOW_LOCAL_WEBHOOK_URLS = "true";
});
afterAll(() => {
	settings.ALLOW_LOCAL_WEBHOOK_URLS = previousAllowLocal;
});
afterEach(() => {
	vi.restoreAllMocks();
});

const PUBLIC_URL = "https://hooks.example.com/billing";

async function createEndpoint(url = PUBLIC_URL) {
	const response = await post("/v1/webhooks", { url, events: ["invoice.created"] });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; url: string };
}

const auditOf = async (resourceId: string) => {
	const response = await get(`/v1/audit-log?resource_id=${resourceId}&limit=100`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body.records as { action: string; changes: Record<string, unknown[]> }[];
};

describe("§37 (§13/§31): special-use and local host names are refused, on create and PATCH", () => {
	const refused = [
		["single-label name", "https://metadata/hook"],
		["single-label name", "https://intranet/hook"],
		["trailing dot", "https://localhost./hook"],
		["trailing dot on a public name", "https://hooks.example.com./hook"],
		["*.localhost", "https://app.localhost/hook"],
		["*.local", "https://printer.local/hook"],
		["*.internal", "https://db.internal/hook"],
		["*.localdomain", "https://host.localdomain/hook"],
		["*.home.arpa", "https://router.home.arpa/hook"],
		["*.test", "https://receiver.test/hook"],
		["*.invalid", "https://nothing.invalid/hook"],
		["*.example", "https://www.example/hook"],
		["invalid label", "https://-.example.com/hook"],
		["invalid label", "https://xn--localhost-/hook"],
		["*.localdomain over http", "http://localhost.localdomain/hook"],
	] as const;

	it.each(refused)("create refuses %s (%s) → 400, nothing stored", async (_label, url) => {
		const before = await dbFingerprint();
		expectError(await post("/v1/webhooks", { url, events: ["invoice.created"] }), 400, "validation_error");
		expect(await dbFingerprint()).toEqual(before);
	});

	it.each(refused)("PATCH refuses %s (%s) → 400, the endpoint unchanged", async (_label, url) => {
		const endpoint = await createEndpoint();
		const before = await dbFingerprint();
		expectError(await patch(`/v1/webhooks/${endpoint.id}`, { url }), 400, "validation_error");
		expect(await dbFingerprint()).toEqual(before);
		expect((await get(`/v1/webhooks/${endpoint.id}`)).body.url).toBe(PUBLIC_URL);
	});

	it.each([
		"http://localhost:8787/hooks",
		"https://localhost/hooks",
		"http://127.0.0.1:3000/hooks",
		"http://[::1]:3000/hooks",
	])("with ALLOW_LOCAL_WEBHOOK_URLS=true, %s is accepted", async (url) => {
		const endpoint = await createEndpoint(url);
		expect(endpoint.url).toBe(url);
	});

	it("without ALLOW_LOCAL_WEBHOOK_URLS=true, a local URL is refused on create and PATCH", async () => {
		const endpoint = await createEndpoint();
		settings.ALLOW_LOCAL_WEBHOOK_URLS = undefined;
		try {
			const before = await dbFingerprint();
			for (const url of ["http://localhost:8787/hooks", "http://127.0.0.1:3000/hooks", "http://[::1]/x"]) {
				expectError(
					await post("/v1/webhooks", { url, events: ["invoice.created"] }),
					400,
					"validation_error",
				);
				expectError(await patch(`/v1/webhooks/${endpoint.id}`, { url }), 400, "validation_error");
			}
			expect(await dbFingerprint()).toEqual(before);
		} finally {
			settings.ALLOW_LOCAL_WEBHOOK_URLS = "true";
		}
	});
});

describe("§37 (§13/§31): a failed test send reports a fixed error class, never the runtime's text", () => {
	const SECRET_TEXT = "internal runtime detail 10.0.0.7 kj/async-io.c++:42";

	async function testSend(endpointUrl = PUBLIC_URL) {
		const endpoint = await createEndpoint(endpointUrl);
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(Object.keys(response.body.result).sort()).toEqual(
			["delivered", "delivery_id", "duration_ms", "error", "status_code"].sort(),
		);
		expect(JSON.stringify(response.body)).not.toContain("internal runtime detail");
		expect(JSON.stringify(response.body)).not.toContain("kj/");
		return response.body.result as { delivered: boolean; status_code: number | null; error: string | null };
	}

	it("a receiver answering 503 → delivered false, status_code 503, error 'http_status'", async () => {
		vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(SECRET_TEXT, { status: 503 }));
		expect(await testSend()).toMatchObject({ delivered: false, status_code: 503, error: "http_status" });
	});

	it("a connection that fails with runtime text → error 'connection_failed', no text", async () => {
		vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
			throw new TypeError(`Network connection lost: ${SECRET_TEXT}`);
		});
		expect(await testSend()).toMatchObject({
			delivered: false,
			status_code: null,
			error: "connection_failed",
		});
	});

	it("a real refused local port (ALLOW_LOCAL_WEBHOOK_URLS) → one of the fixed classes", async () => {
		const result = await testSend("http://127.0.0.1:9/hooks");
		expect(result.delivered).toBe(false);
		expect(["timeout", "connection_failed", "tls_error", "http_status"]).toContain(result.error);
	});

	it("a timeout → error 'timeout'", async () => {
		vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
			throw new DOMException(`The operation was aborted due to timeout ${SECRET_TEXT}`, "TimeoutError");
		});
		expect(await testSend()).toMatchObject({ delivered: false, status_code: null, error: "timeout" });
	});
});

describe("§37 (§29): a PATCH that changes nothing writes no audit record", () => {
	it("accounts: the same values, or {}, write nothing; a real change writes one record", async () => {
		const account = await createAccount(undefined, { name: "Same Co", net_terms_days: 14 });
		const before = (await auditOf(account.id)).length;
		expect((await patch(`/v1/accounts/${account.id}`, { name: "Same Co", net_terms_days: 14 })).status).toBe(
			200,
		);
		expect((await patch(`/v1/accounts/${account.id}`, {})).status).toBe(200);
		expect(await auditOf(account.id)).toHaveLength(before);
		expect((await patch(`/v1/accounts/${account.id}`, { name: "Other Co" })).status).toBe(200);
		const after = await auditOf(account.id);
		expect(after).toHaveLength(before + 1);
		expect(after[0]).toMatchObject({ action: "account.updated", changes: { name: ["Same Co", "Other Co"] } });
	});

	it("agents: the same name writes nothing", async () => {
		const agent = await createAgent(ADMIN_KEY, { name: "Steady", description: "same" });
		const before = (await auditOf(agent.id)).length;
		expect((await patch(`/v1/agents/${agent.id}`, { name: "Steady", description: "same" })).status).toBe(200);
		expect(await auditOf(agent.id)).toHaveLength(before);
	});

	it("subscriptions: the same instances write nothing", async () => {
		const plan = await createPlan({ base_fee: 1, charges: [] });
		const account = await createAccount();
		const instances = [instanceKey(), instanceKey()];
		const subscription = await subscribe(account.id, plan.id, instances);
		const before = (await auditOf(subscription.id)).length;
		const response = await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: instances });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(await auditOf(subscription.id)).toHaveLength(before);
	});

	it("webhooks: the same events and status write nothing", async () => {
		const endpoint = await createEndpoint();
		const before = (await auditOf(endpoint.id)).length;
		const response = await patch(`/v1/webhooks/${endpoint.id}`, {
			url: PUBLIC_URL,
			events: ["invoice.created"],
			status: "enabled",
		});
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(await auditOf(endpoint.id)).toHaveLength(before);
	});
});

describe("§37 (§29): invoice.finalized records the number it assigned", () => {
	it("finalizing a draft writes invoice.finalized with the new number", async () => {
		const plan = await createPlan({ base_fee: 9, charges: [] });
		const account = await createAccount(undefined, { invoice_grace_days: 2 });
		await subscribe(account.id, plan.id, [instanceKey()]);
		const draft = (await generate(currentPeriod(), account.id)).invoices[0]!;
		const finalized = await post(`/v1/invoices/${draft.id}/finalize`);
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		const records = (await auditOf(draft.id)).filter((r) => r.action === "invoice.finalized");
		expect(records).toHaveLength(1);
		const number = records[0]?.changes.number;
		expect(number, JSON.stringify(records[0])).toBeDefined();
		expect(number?.at(-1)).toBe(finalized.body.number);
	});
});

describe("§37 (§30): MCP errors and tool schemas", () => {
	const mcp = (message: unknown) =>
		call("POST", "/mcp", {
			body: message,
			headers: { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" },
		});

	async function toolError(name: string, args: unknown) {
		const response = await mcp({
			jsonrpc: "2.0",
			id: 1,
			method: "tools/call",
			params: { name, arguments: args },
		});
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const result = response.body.result;
		expect(result, JSON.stringify(response.body)).toBeDefined();
		expect(result.isError).toBe(true);
		const text = result.content[0].text as string;
		expect(text).not.toMatch(/MCP error/);
		const json = JSON.parse(text);
		expect(Object.keys(json)).toEqual(["error"]);
		if (result.structuredContent !== undefined) expect(result.structuredContent).toEqual(json);
		return json.error as { code: string; message: string; request_id: string };
	}

	it("invalid arguments: the text is the REST validation error body, once, no 'MCP error -32602:' prefix", async () => {
		const error = await toolError("record_action", { agent_key: 42, action_type: "llm_call" });
		expect(error.code).toBe("validation_error");
		expect(error.message).not.toMatch(/MCP error/);
	});

	it("a missing required argument is the same REST error body", async () => {
		const error = await toolError("simulate_price", { usage: {} });
		expect(error.code).toBe("validation_error");
	});

	it("an unknown id is the REST 404 body", async () => {
		const error = await toolError("simulate_price", { rate_plan_id: "plan_missing", usage: {} });
		expect(error.code).toBe("not_found");
	});

	it("protocol errors (-32602) carry their message once, without an 'MCP error -32602:' prefix", async () => {
		for (const params of [
			{ name: "no_such_tool", arguments: {} },
			{ name: "check_entitlement", arguments: "not an object" },
		]) {
			const response = await mcp({ jsonrpc: "2.0", id: 3, method: "tools/call", params });
			const error = response.body.error ?? response.body.result;
			expect(response.body.error?.code, JSON.stringify(response.body)).toBe(-32602);
			expect(JSON.stringify(error)).not.toMatch(/MCP error/);
		}
	});

	it("every property of every tool's input schema has exactly one JSON Schema type", async () => {
		const response = await mcp({ jsonrpc: "2.0", id: 2, method: "tools/list" });
		expect(response.status).toBe(200);
		const problems: string[] = [];
		const visit = (path: string, schema: Record<string, any>) => {
			for (const [name, property] of Object.entries<Record<string, any>>(schema.properties ?? {})) {
				if (typeof property.type !== "string") {
					problems.push(`${path}.${name}: ${JSON.stringify(property).slice(0, 160)}`);
				}
				if (property.type === "object") visit(`${path}.${name}`, property);
			}
		};
		for (const tool of response.body.result.tools as { name: string; inputSchema: Record<string, any> }[]) {
			expect(tool.inputSchema.type).toBe("object");
			visit(tool.name, tool.inputSchema);
		}
		expect(problems).toEqual([]);
	});
});
