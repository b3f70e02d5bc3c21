import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, expectError, get, post } from "../helpers";

// §14 as amended: records are scoped to the calling key, keep no secret, and a first request still in progress
// after 60 seconds is abandoned.

const withKey = (key: string, apiKey: string = ADMIN_KEY) => ({
	key: apiKey,
	headers: { "Idempotency-Key": key },
});

async function storedRecords(path: string): Promise<{ response_body: string | null; key_id: string }[]> {
	const { results } = await env.DB.prepare("SELECT * FROM idempotency_records WHERE path = ?")
		.bind(path)
		.all<{ response_body: string | null; key_id: string }>();
	return results;
}

async function sha256Hex(text: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
	return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A record left behind by a first request that started `ageMs` ago and never finished (its Worker died). */
async function leaveInProgress(input: {
	keyId: string;
	path: string;
	key: string;
	body: unknown;
	ageMs: number;
	environment?: string;
}) {
	const created = new Date(Date.now() - input.ageMs).toISOString();
	await env.DB.prepare(
		`INSERT INTO idempotency_records (environment, key_id, method, path, key, request_hash, claim_id, state, created_at, expires_at)
		 VALUES (?, ?, 'POST', ?, ?, ?, 'dead-claim', 'in_progress', ?, ?)`,
	)
		.bind(
			input.environment ?? "live",
			input.keyId,
			input.path,
			input.key,
			await sha256Hex(JSON.stringify(input.body)),
			created,
			new Date(Date.now() + 3_600_000).toISOString(),
		)
		.run();
}

async function createAdminKey(environment: "live" | "test" = "live") {
	const response = await post("/v1/api-keys", { type: "api", permission: "admin", environment });
	expect(response.status).toBe(201);
	return response.body as { id: string; key: string };
}

describe("Idempotency-Key records are scoped to the calling key (§14)", () => {
	it("runs the same Idempotency-Key from another key as a new, independent request", async () => {
		const other = await createKey("admin");
		const body = { name: "Scoped", type: "n8n" };
		const first = await post("/v1/agents", body, withKey("scoped-1"));
		const second = await post("/v1/agents", body, withKey("scoped-1", other));
		expect(first.status).toBe(201);
		expect(second.status).toBe(201);
		expect(second.headers.get("Idempotent-Replayed")).toBeNull();
		expect(second.body.id).not.toBe(first.body.id);
		// a third key with another body is not "reused" either
		const third = await post(
			"/v1/agents",
			{ name: "Other", type: "n8n" },
			withKey("scoped-1", await createKey("admin")),
		);
		expect(third.status).toBe(201);
		// each key still replays its own
		const replay = await post("/v1/agents", body, withKey("scoped-1", other));
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body.id).toBe(second.body.id);
	});
});

describe("Responses that carried a secret are kept without it (§14)", () => {
	it("replays a created API key with key null, and stores no secret", async () => {
		const first = await post("/v1/api-keys", { type: "sdk" }, withKey("key-secret-1"));
		expect(first.status).toBe(201);
		expect(first.body.key).toMatch(/^sk_live_/);
		const replay = await post("/v1/api-keys", { type: "sdk" }, withKey("key-secret-1"));
		expect(replay.status).toBe(201);
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body).toEqual({ ...first.body, key: null });
		const records = await storedRecords("/v1/api-keys");
		expect(records.length).toBeGreaterThan(0);
		for (const record of records) expect(record.response_body ?? "").not.toContain(first.body.key);
		// the new key works, and only its hash is stored
		expect((await get("/v1/usage", { key: first.body.key })).status).not.toBe(401);
	});

	it("replays a created webhook endpoint with secret null, and stores the secret only encrypted", async () => {
		const body = { url: "https://receiver.example.com/hooks", events: ["invoice.created"] };
		const first = await post("/v1/webhooks", body, withKey("whk-secret-1"));
		expect(first.status).toBe(201);
		expect(first.body.secret).toMatch(/^whsec_/);
		const replay = await post("/v1/webhooks", body, withKey("whk-secret-1"));
		expect(replay.status).toBe(201);
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body).toEqual({ ...first.body, secret: null });
		for (const record of await storedRecords("/v1/webhooks")) {
			expect(record.response_body ?? "").not.toContain(first.body.secret);
		}
		const secretB64 = first.body.secret.slice("whsec_".length);
		const dump = await env.DB.prepare("SELECT * FROM webhook_endpoints WHERE id = ?")
			.bind(first.body.id)
			.first();
		expect(JSON.stringify(dump)).not.toContain(secretB64);
	});

	it("never shows another key the first one's secret", async () => {
		const other = await createKey("admin");
		const first = await post("/v1/api-keys", { type: "sdk" }, withKey("key-secret-2"));
		const fromOther = await post("/v1/api-keys", { type: "sdk" }, withKey("key-secret-2", other));
		expect(fromOther.status).toBe(201);
		expect(fromOther.headers.get("Idempotent-Replayed")).toBeNull();
		expect(fromOther.body.id).not.toBe(first.body.id);
		expect(fromOther.body.key).not.toBe(first.body.key);
	});
});

describe("A first request in progress for over 60 seconds is abandoned (§14)", () => {
	it("still answers 409 idempotency_key_in_use within the 60 seconds", async () => {
		const admin = await createAdminKey();
		const body = { name: "Young", type: "n8n" };
		await leaveInProgress({ keyId: admin.id, path: "/v1/agents", key: "young", body, ageMs: 30_000 });
		expectError(await post("/v1/agents", body, withKey("young", admin.key)), 409, "idempotency_key_in_use");
	});

	it("runs a repeat afresh after 60 seconds, and replays that one from then on", async () => {
		const admin = await createAdminKey();
		const body = { name: "Abandoned", type: "n8n" };
		await leaveInProgress({ keyId: admin.id, path: "/v1/agents", key: "stale", body, ageMs: 61_000 });
		const fresh = await post("/v1/agents", body, withKey("stale", admin.key));
		expect(fresh.status).toBe(201);
		expect(fresh.headers.get("Idempotent-Replayed")).toBeNull();
		const replay = await post("/v1/agents", body, withKey("stale", admin.key));
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body.id).toBe(fresh.body.id);
	});

	it("abandons a stale record whatever its body: the new request runs", async () => {
		const admin = await createAdminKey();
		await leaveInProgress({
			keyId: admin.id,
			path: "/v1/agents",
			key: "stale-2",
			body: { x: 1 },
			ageMs: 61_000,
		});
		const fresh = await post("/v1/agents", { name: "New body", type: "n8n" }, withKey("stale-2", admin.key));
		expect(fresh.status).toBe(201);
	});
});
