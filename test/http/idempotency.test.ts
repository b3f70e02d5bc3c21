import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectError, get, post } from "../helpers";

const withKey = (key: string) => ({ headers: { "Idempotency-Key": key } });

describe("Idempotency-Key (§14)", () => {
	it("replays the first response of a repeated request and creates nothing new", async () => {
		const body = { name: "Replayed", type: "n8n" };
		const first = await post("/v1/agents", body, withKey("create-agent-1"));
		expect(first.status).toBe(201);
		expect(first.headers.get("Idempotent-Replayed")).toBeNull();
		const again = await post("/v1/agents", body, withKey("create-agent-1"));
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		const named = (await get("/v1/agents?limit=100")).body.agents.filter(
			(a: { name: string }) => a.name === "Replayed",
		);
		expect(named).toHaveLength(1);
	});

	it("answers 409 idempotency_key_reused for the same key with another body", async () => {
		await post("/v1/agents", { name: "One", type: "n8n" }, withKey("create-agent-2"));
		const reused = await post("/v1/agents", { name: "Two", type: "n8n" }, withKey("create-agent-2"));
		expectError(reused, 409, "idempotency_key_reused");
	});

	it("answers 409 idempotency_key_in_use while the first request runs", async () => {
		const body = JSON.stringify({ name: "Slow", type: "n8n" });
		const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
		const hash = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
		await env.DB.prepare(
			`INSERT INTO idempotency_records (environment, key_id, method, path, key, request_hash, claim_id, state, created_at, expires_at)
			 VALUES ('live', 'key_operator', 'POST', '/v1/agents', 'in-flight', ?, 'first', 'in_progress', ?, ?)`,
		)
			.bind(hash, new Date().toISOString(), new Date(Date.now() + 60_000).toISOString())
			.run();
		expectError(
			await post("/v1/agents", JSON.parse(body), withKey("in-flight")),
			409,
			"idempotency_key_in_use",
		);
	});

	it("scopes keys by path and environment", async () => {
		const agent = await post("/v1/agents", { name: "A", type: "n8n" }, withKey("shared"));
		const account = await post("/v1/accounts", { name: "B", email: "b@example.com" }, withKey("shared"));
		expect(agent.status).toBe(201);
		expect(account.status).toBe(201);
		expect(account.headers.get("Idempotent-Replayed")).toBeNull();
	});

	it("keeps error responses too, but not server errors", async () => {
		const invalid = { name: "", type: "n8n" };
		expectError(await post("/v1/agents", invalid, withKey("bad-1")), 400, "validation_error");
		const replay = await post("/v1/agents", invalid, withKey("bad-1"));
		expect(replay.status).toBe(400);
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
	});

	it("rejects an over-long key", async () => {
		const response = await post("/v1/agents", { name: "A", type: "n8n" }, withKey("k".repeat(256)));
		expectError(response, 400, "validation_error");
	});
});
