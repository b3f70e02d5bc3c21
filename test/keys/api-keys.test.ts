import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, del, expectError, get, post } from "../helpers";

describe("API keys (§3)", () => {
	it("creates an API key whose secret is shown once and stored only as a hash", async () => {
		const created = await post("/v1/api-keys", { type: "api", permission: "read-write", name: "ci" });
		expect(created.status).toBe(201);
		expect(created.body).toMatchObject({
			type: "api",
			environment: "live",
			permission: "read-write",
			name: "ci",
			last_used_at: null,
		});
		expect(created.body.id).toMatch(/^key_/);
		expect(created.body.key).toMatch(/^sk_api_[A-Za-z0-9]{40}$/);
		expect(created.body.key.startsWith(created.body.prefix.replace("…", ""))).toBe(true);

		const stored = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(created.body.id).first();
		expect(JSON.stringify(stored)).not.toContain(created.body.key);
		expect(stored?.hash).toMatch(/^[0-9a-f]{64}$/);

		const listed = await get("/v1/api-keys");
		const item = listed.body.api_keys.find((k: { id: string }) => k.id === created.body.id);
		expect(item).toBeDefined();
		expect(item).not.toHaveProperty("key");
		expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
	});

	it("creates SDK keys whose prefix names their environment", async () => {
		const live = await post("/v1/api-keys", { type: "sdk" });
		expect(live.status).toBe(201);
		expect(live.body).toMatchObject({ type: "sdk", environment: "live", permission: null });
		expect(live.body.key).toMatch(/^sk_live_/);
		const test = await post("/v1/api-keys", { type: "sdk", environment: "test" });
		expect(test.body.key).toMatch(/^sk_test_/);
		expect(test.body.environment).toBe("test");
	});

	it.each([
		[{ type: "api" }, "permission"],
		[{ type: "sdk", permission: "admin" }, "permission"],
		[{ type: "robot" }, "type"],
		[{ type: "api", permission: "owner" }, "permission"],
		[{ type: "api", permission: "admin", environment: "staging" }, "environment"],
		[{ type: "api", permission: "admin", secret: "mine" }, "secret"],
	])("rejects %j", async (body, path) => {
		const error = expectError(await post("/v1/api-keys", body), 400, "validation_error");
		expect(error.details?.[0]?.path).toBe(path);
	});

	it("uses a new key, and answers 401 as soon as it is revoked", async () => {
		const key = await createKey("read-only");
		expect((await get("/v1/agents", { key })).status).toBe(200);
		const id = (await get("/v1/api-keys")).body.api_keys.find((k: { prefix: string }) =>
			key.startsWith(k.prefix.replace("…", "")),
		).id;
		expect((await del(`/v1/api-keys/${id}`)).status).toBe(204);
		const after = await get("/v1/agents", { key });
		expectError(after, 401, "unauthorized");
		expect(after.headers.get("WWW-Authenticate")).toBe("Bearer");
		expectError(await del(`/v1/api-keys/${id}`), 404, "not_found");
	});

	it("answers 401 for a missing, malformed or unknown key", async () => {
		const malformed: Record<string, string>[] = [
			{},
			{ Authorization: "Basic abc" },
			{ Authorization: "Bearer " },
		];
		for (const headers of malformed) {
			const response = await get("/v1/agents", { key: null, headers });
			expectError(response, 401, "unauthorized");
			expect(response.headers.get("WWW-Authenticate")).toBe("Bearer");
			expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
		}
		expectError(await get("/v1/agents", { key: "sk_api_not_a_real_key_at_all_000000" }), 401, "unauthorized");
		expectError(await get("/v1/agents", { key: "garbage" }), 401, "unauthorized");
	});

	it("keeps keys of the test environment out of the live list", async () => {
		const testAdmin = await createKey("admin", "test");
		const created = await post("/v1/api-keys", { type: "sdk" }, { key: testAdmin });
		expect(created.body.environment).toBe("test");
		const liveIds = (await get("/v1/api-keys?limit=100")).body.api_keys.map((k: { id: string }) => k.id);
		expect(liveIds).not.toContain(created.body.id);
		expectError(await del(`/v1/api-keys/${created.body.id}`), 404, "not_found");
	});

	it("cannot revoke the operator key through the API", async () => {
		expectError(await del("/v1/api-keys/key_operator"), 400, "validation_error");
		expect((await get("/v1/agents", { key: ADMIN_KEY })).status).toBe(200);
	});
});
