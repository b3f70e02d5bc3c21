import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createKey, del, expectError, get, patch, post } from "../helpers";
import { createEndpoint, RECEIVER_URL } from "./fixtures";

const ID = /^whk_[0-9a-z]{26}$/;

describe("POST /v1/webhooks", () => {
	it("creates an enabled endpoint and shows its secret once", async () => {
		const response = await post("/v1/webhooks", {
			url: RECEIVER_URL,
			events: ["invoice.created", "invoice.paid"],
			description: "Accounting sync",
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(ID),
			url: RECEIVER_URL,
			events: ["invoice.created", "invoice.paid"],
			description: "Accounting sync",
			status: "enabled",
			secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
			created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
		});
		// 32 random bytes behind the prefix.
		expect(atob(response.body.secret.slice("whsec_".length)).length).toBe(32);

		const stored = await env.DB.prepare(
			"SELECT environment, secret, status FROM webhook_endpoints WHERE id = ?",
		)
			.bind(response.body.id)
			.first();
		// Stored encrypted (§14: no secret in plain text), never as the secret or its base64 part.
		expect(stored).toMatchObject({ environment: "live", status: "enabled" });
		expect(stored?.secret).toMatch(/^enc1:/);
		expect(stored?.secret).not.toContain(response.body.secret.slice("whsec_".length));
	});

	it("gives every endpoint its own secret and a null description by default", async () => {
		const a = await createEndpoint();
		const b = await createEndpoint();
		expect(a.secret).not.toBe(b.secret);
		expect(a.description).toBeNull();
	});

	it.each([
		"http://localhost:8787/hooks",
		"http://127.0.0.1/hooks",
		"http://[::1]:3000/hooks",
		"https://hooks.example.com:8443/a?b=c",
	])("accepts %s", async (url) => {
		expect((await createEndpoint({ url })).url).toBe(url);
	});

	it.each([
		["plain http to a public host", { url: "http://example.com/hooks" }, "url"],
		["http to a private address", { url: "http://10.0.0.1/hooks" }, "url"],
		["another scheme", { url: "ftp://example.com/hooks" }, "url"],
		["not a URL", { url: "receiver" }, "url"],
		["a missing url", { url: undefined }, "url"],
		["no events", { events: [] }, "events"],
		["an unknown event kind", { events: ["invoice.deleted"] }, "events[0]"],
		["a duplicate event kind", { events: ["invoice.paid", "invoice.paid"] }, "events"],
		["a description over 1000 characters", { description: "x".repeat(1001) }, "description"],
		["a status (not settable on create)", { status: "disabled" }, "status"],
		["a secret (never chosen by the client)", { secret: "whsec_mine" }, "secret"],
	])("rejects %s with 400", async (_, overrides, path) => {
		const response = await post("/v1/webhooks", {
			url: RECEIVER_URL,
			events: ["invoice.created"],
			...overrides,
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("rejects a body that is not JSON (415) or not valid JSON (400)", async () => {
		expectError(
			await post("/v1/webhooks", undefined, { raw: "url=x", headers: { "Content-Type": "text/plain" } }),
			415,
			"unsupported_media_type",
		);
		expectError(
			await post("/v1/webhooks", undefined, { raw: "{", headers: { "Content-Type": "application/json" } }),
			400,
			"invalid_json",
		);
	});
});

describe("GET /v1/webhooks and /v1/webhooks/{webhook_id}", () => {
	it("lists endpoints newest first, paginated, without secrets", async () => {
		const older = await createEndpoint();
		const newer = await createEndpoint({ events: ["outcome.completed"] });
		const page = await get("/v1/webhooks?limit=2&offset=0");
		expect(page.status).toBe(200);
		expect(page.body.limit).toBe(2);
		expect(page.body.offset).toBe(0);
		expect(page.body.total).toBeGreaterThanOrEqual(2);
		expect(page.body.webhooks.map((w: { id: string }) => w.id)).toEqual([newer.id, older.id]);
		for (const webhook of page.body.webhooks) expect(webhook).not.toHaveProperty("secret");

		const next = await get(`/v1/webhooks?limit=1&offset=1`);
		expect(next.body.webhooks[0].id).toBe(older.id);
	});

	it("rejects bad pagination with 400", async () => {
		expectError(await get("/v1/webhooks?limit=0"), 400, "validation_error");
		expectError(await get("/v1/webhooks?offset=-1"), 400, "validation_error");
	});

	it("gets one endpoint without its secret; an unknown id is 404", async () => {
		const { secret, ...view } = await createEndpoint({ description: "CRM" });
		const response = await get(`/v1/webhooks/${view.id}`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual(view);
		expect(JSON.stringify(response.body)).not.toContain(secret);
		expectError(await get("/v1/webhooks/whk_unknown"), 404, "not_found");
	});
});

describe("PATCH /v1/webhooks/{webhook_id}", () => {
	it("changes url, events, description and status", async () => {
		const endpoint = await createEndpoint();
		const changes = {
			url: "https://new.receiver.example.net/in",
			events: ["subscription.created", "subscription.cancelled"],
			description: "Moved",
			status: "disabled",
		};
		const response = await patch(`/v1/webhooks/${endpoint.id}`, changes);
		expect(response.status).toBe(200);
		expect(response.body).toEqual({ id: endpoint.id, created_at: endpoint.created_at, ...changes });
		expect((await get(`/v1/webhooks/${endpoint.id}`)).body).toEqual(response.body);

		const enabled = await patch(`/v1/webhooks/${endpoint.id}`, { status: "enabled", description: null });
		expect(enabled.body).toMatchObject({ status: "enabled", description: null, url: changes.url });
	});

	it.each([
		["an http url to a public host", { url: "http://example.com" }],
		["empty events", { events: [] }],
		["an unknown status", { status: "paused" }],
		["an unknown field", { secret: "whsec_x" }],
	])("rejects %s with 400", async (_, body) => {
		const endpoint = await createEndpoint();
		expectError(await patch(`/v1/webhooks/${endpoint.id}`, body), 400, "validation_error");
	});

	it("answers 404 for an unknown endpoint", async () => {
		expectError(await patch("/v1/webhooks/whk_unknown", { status: "disabled" }), 404, "not_found");
	});
});

describe("DELETE /v1/webhooks/{webhook_id}", () => {
	it("deletes the endpoint (204); it is 404 from then on", async () => {
		const endpoint = await createEndpoint();
		const response = await del(`/v1/webhooks/${endpoint.id}`);
		expect(response.status).toBe(204);
		expect(response.body).toBeNull();
		expectError(await get(`/v1/webhooks/${endpoint.id}`), 404, "not_found");
		expectError(await del(`/v1/webhooks/${endpoint.id}`), 404, "not_found");
	});
});

describe("access", () => {
	const routes = (id: string): [string, string, unknown?][] => [
		["GET", "/v1/webhooks"],
		["POST", "/v1/webhooks", { url: RECEIVER_URL, events: ["invoice.paid"] }],
		["GET", `/v1/webhooks/${id}`],
		["PATCH", `/v1/webhooks/${id}`, { status: "disabled" }],
		["DELETE", `/v1/webhooks/${id}`],
		["GET", `/v1/webhooks/${id}/deliveries`],
		["POST", `/v1/webhooks/${id}/deliveries/dlv_x/retry`],
		["POST", "/v1/webhooks/test", { webhook_id: id, event: "invoice.paid" }],
	];

	it.each(["sdk", "read-only", "read-write"] as const)(
		"refuses %s keys with 403 on every webhook route",
		async (kind) => {
			const key = await createKey(kind);
			const endpoint = await createEndpoint();
			for (const [method, path, body] of routes(endpoint.id)) {
				expectError(await call(method, path, { key, body }), 403, "forbidden");
			}
			// Nothing changed.
			expect((await get(`/v1/webhooks/${endpoint.id}`)).body.status).toBe("enabled");
		},
	);

	it("keeps endpoints to their environment: the other one sees 404 and an empty list", async () => {
		const testAdmin = await createKey("admin", "test");
		const live = await createEndpoint();
		const test = await createEndpoint({ events: ["outcome.completed"] }, testAdmin);
		const stored = await env.DB.prepare("SELECT environment FROM webhook_endpoints WHERE id = ?")
			.bind(test.id)
			.first();
		expect(stored).toEqual({ environment: "test" });

		const testList = await get("/v1/webhooks?limit=100", { key: testAdmin });
		expect(testList.body.webhooks.map((w: { id: string }) => w.id)).toEqual([test.id]);
		const liveList = await get("/v1/webhooks?limit=100");
		expect(liveList.body.webhooks.map((w: { id: string }) => w.id)).not.toContain(test.id);

		for (const [method, path, body] of routes(live.id).slice(2)) {
			expectError(await call(method, path, { key: testAdmin, body }), 404, "not_found");
		}
		expect((await get(`/v1/webhooks/${live.id}`)).body.status).toBe("enabled");
		expectError(await get(`/v1/webhooks/${test.id}`), 404, "not_found");
	});
});
