import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { type ApiResponse, call, createAgent, createKey, get, post } from "../helpers";

// The document's promises about headers, checked against real answers: every header it declares required is
// sent, and every header of §2–§4 and §14 that is sent is declared for that operation and status.
let doc: any;

function operation(method: string, path: string) {
	const bare = path.split("?")[0] ?? path;
	for (const [template, item] of Object.entries(doc.paths as Record<string, any>)) {
		const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
		if (pattern.test(bare) && item[method.toLowerCase()]) return item[method.toLowerCase()];
	}
	throw new Error(`${method} ${path} is not in the document`);
}

function expectDocumented(method: string, path: string, response: ApiResponse) {
	const where = `${method} ${path} → ${response.status}`;
	const declared = operation(method, path).responses[String(response.status)];
	expect(declared, `${where} is not documented`).toBeDefined();
	const headers = Object.fromEntries(
		Object.entries(declared.headers ?? {}).map(([name, h]: [string, any]) => [
			name.toLowerCase(),
			h.$ref ? doc.components.headers[h.$ref.split("/").pop()] : h,
		]),
	);
	for (const [name, header] of Object.entries(headers)) {
		if (header.required) expect(response.headers.get(name), `${where}: ${name}`).not.toBeNull();
	}
	for (const name of [
		"x-request-id",
		"x-ratelimit-limit",
		"x-ratelimit-remaining",
		"x-ratelimit-reset",
		"retry-after",
		"www-authenticate",
		"idempotent-replayed",
	]) {
		if (response.headers.has(name)) expect(headers, `${where} sends ${name}`).toHaveProperty(name);
	}
	if (response.status >= 400) {
		const codes = doc.components.schemas.Error.properties.error.properties.code.enum;
		expect(codes, where).toContain(response.body.error.code);
	}
}

async function checked(method: string, path: string, options: Parameters<typeof call>[2] = {}) {
	const response = await call(method, path, options);
	expectDocumented(method, path, response);
	return response;
}

beforeAll(async () => {
	const response = await get("/v1/openapi.json", { key: null });
	expect(response.status).toBe(200);
	doc = response.body;
});

describe("the OpenAPI document tells the truth about headers", () => {
	it("on reads, creates, replays and their errors", async () => {
		await checked("GET", "/v1/agents");
		const body = { name: "Truthful", type: "custom" };
		const headers = { "Idempotency-Key": "truth-1" };
		const first = await checked("POST", "/v1/agents", { body, headers });
		expect(first.status).toBe(201);
		const replay = await checked("POST", "/v1/agents", { body, headers });
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(
			(await checked("POST", "/v1/agents", { body: { name: "Other", type: "custom" }, headers })).status,
		).toBe(409);
		const invalid = { body: { name: "", type: "robot" }, headers: { "Idempotency-Key": "truth-2" } };
		expect((await checked("POST", "/v1/agents", invalid)).status).toBe(400);
		const replayedError = await checked("POST", "/v1/agents", invalid);
		expect(replayedError.headers.get("Idempotent-Replayed")).toBe("true");
		expect((await checked("GET", "/v1/agents/agt_unknown")).status).toBe(404);
		expect((await checked("POST", "/v1/invoices/inv_unknown/void")).status).toBe(404);
		expect((await checked("PATCH", "/v1/agents/agt_unknown", { raw: "{}" })).status).toBe(415);
	});

	it("on /healthz, which needs no key", async () => {
		const health = await checked("GET", "/healthz", { key: null });
		expect(health.status).toBe(200);
		expect(health.body).toEqual({ status: "ok" });
	});

	it("on 401 and 403", async () => {
		const unauthorized = await checked("GET", "/v1/agents", { key: null });
		expect(unauthorized.status).toBe(401);
		const sdk = await createKey("sdk");
		expect((await checked("GET", "/v1/agents", { key: sdk })).status).toBe(403);
	});

	it("on metering events and their replays", async () => {
		const agent = await createAgent();
		await post(`/v1/agents/${agent.id}/instances`, { key: "truth-bot-1" });
		const sdk = await createKey("sdk");
		const event = { agent_key: "truth-bot-1", action_type: "llm_call", idempotency_key: "truth-event-1" };
		expect((await checked("POST", "/v1/actions", { key: sdk, body: event })).status).toBe(201);
		const again = await checked("POST", "/v1/actions", { key: sdk, body: event });
		expect(again.status).toBe(200);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
	});

	it("on 429", async () => {
		const key = await createKey("read-only");
		const ctx = createExecutionContext();
		const send = () =>
			createApp().fetch(
				new Request("https://billing.test/v1/agents", { headers: { Authorization: `Bearer ${key}` } }),
				{ ...env, RATE_LIMIT_API_PER_MINUTE: "1" },
				ctx,
			);
		await send();
		const limited = await send();
		await waitOnExecutionContext(ctx);
		expect(limited.status).toBe(429);
		expectDocumented("GET", "/v1/agents", {
			status: limited.status,
			headers: limited.headers,
			body: await limited.json(),
		});
	});
});

describe("the document's own response", () => {
	it("is served finished, the same each time, with X-Request-Id", async () => {
		const first = await get("/v1/openapi.json", { key: null });
		const second = await get("/v1/openapi.json", { key: null });
		for (const response of [first, second]) {
			expect(response.status).toBe(200);
			expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
			expect(response.headers.get("X-Request-Id")).toMatch(/^req_/);
			expect(response.body.components.headers).toHaveProperty("X-Request-Id");
			expect(response.body.paths["/v1/agents"].get.operationId).toBe("listAgents");
		}
		expect(second.body).toEqual(first.body);
		expect(first.headers.get("X-Request-Id")).not.toBe(second.headers.get("X-Request-Id"));
	});
});
