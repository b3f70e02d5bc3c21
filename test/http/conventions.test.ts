import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, call, expectError, get, post } from "../helpers";

describe("HTTP conventions (§1, §2)", () => {
	it("serves /healthz without a key", async () => {
		const response = await get("/healthz", { key: null });
		expect(response.status).toBe(200);
		expect(response.body).toEqual({ status: "ok" });
	});

	it("gives every response an X-Request-Id, echoing a client's", async () => {
		const generated = await get("/v1/agents");
		expect(generated.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-z]{26}$/);
		const echoed = await get("/v1/agents", { headers: { "X-Request-Id": "trace-123" } });
		expect(echoed.headers.get("X-Request-Id")).toBe("trace-123");
	});

	it("refuses a body without a JSON content type (415) and changes nothing", async () => {
		const before = await get("/v1/agents");
		const response = await call("POST", "/v1/agents", {
			raw: JSON.stringify({ name: "A", type: "custom" }),
			headers: { "Content-Type": "text/plain" },
		});
		expectError(response, 415, "unsupported_media_type");
		expect((await get("/v1/agents")).body.total).toBe(before.body.total);
	});

	it("accepts a JSON content type with parameters", async () => {
		const response = await call("POST", "/v1/agents", {
			raw: JSON.stringify({ name: "A", type: "custom" }),
			headers: { "Content-Type": "application/json; charset=utf-8" },
		});
		expect(response.status).toBe(201);
	});

	it("answers malformed JSON with 400 invalid_json", async () => {
		const response = await call("POST", "/v1/agents", {
			raw: '{"name": "A",',
			headers: { "Content-Type": "application/json" },
		});
		expectError(response, 400, "invalid_json");
	});

	it("answers a missing body with 400 validation_error", async () => {
		expectError(await call("POST", "/v1/agents"), 400, "validation_error");
	});

	it("refuses a body over 1 MiB with 413", async () => {
		const response = await post("/v1/agents", {
			name: "A",
			type: "custom",
			description: "x".repeat(1024 * 1024),
		});
		expectError(response, 413, "payload_too_large");
	});

	it("rejects unknown fields, naming them", async () => {
		const response = await post("/v1/agents", { name: "A", type: "custom", id: "agt_mine" });
		const error = expectError(response, 400, "validation_error");
		expect(error.details).toEqual([{ path: "id", message: "Unknown field: id." }]);
	});

	it("names the path of a bad enum value", async () => {
		const error = expectError(
			await post("/v1/agents", { name: "A", type: "autogen" }),
			400,
			"validation_error",
		);
		expect(error.details?.[0]?.path).toBe("type");
	});

	it.each([
		["limit=101", "limit"],
		["limit=0", "limit"],
		["limit=abc", "limit"],
		["offset=-1", "offset"],
		["page=2", "page"],
	])("rejects the list query %s", async (query, path) => {
		const error = expectError(await get(`/v1/agents?${query}`), 400, "validation_error");
		expect(error.details?.[0]?.path).toContain(path);
	});

	it("answers unknown routes with 404 and wrong methods with 405", async () => {
		expectError(await get("/v1/nothing-here"), 404, "not_found");
		expectError(await get("/elsewhere", { key: null }), 404, "not_found");
		const wrongMethod = await call("PUT", "/v1/agents");
		expectError(wrongMethod, 405, "method_not_allowed");
		expect(wrongMethod.headers.get("Allow")).toBe("GET, POST");
	});

	it("answers unexpected failures with 500 internal_error that leaks nothing", async () => {
		const { createApp } = await import("../../src/app");
		const broken = {
			...env,
			DB: { prepare: () => ({}) as never, batch: () => Promise.reject(new Error("SQL secret")) },
		};
		const ctx = {
			waitUntil: () => {},
			passThroughOnException: () => {},
			props: {},
		} as unknown as ExecutionContext;
		const response = await createApp().fetch(
			new Request("https://billing.test/v1/agents", { headers: { Authorization: `Bearer ${ADMIN_KEY}` } }),
			broken,
			ctx,
		);
		expect(response.status).toBe(500);
		const body = (await response.json()) as { error: { code: string; message: string } };
		expect(body.error.code).toBe("internal_error");
		expect(JSON.stringify(body)).not.toMatch(/SQL|secret|stack|at /);
	});

	it("serves the OpenAPI document and the reference page without a key", async () => {
		const doc = await get("/v1/openapi.json", { key: null });
		expect(doc.status).toBe(200);
		expect(doc.body.openapi).toBe("3.1.0");
		const page = await get("/docs", { key: null });
		expect(page.status).toBe(200);
		expect(String(page.body)).toContain("/v1/openapi.json");
	});
});
