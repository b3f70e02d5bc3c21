import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routeAccess } from "../../src/http/permissions";
import { sha256Hex } from "../../src/lib/sha256";
import { ADMIN_KEY, call, createAccount, createKey, del, expectError, get, post } from "../helpers";
import { mint, sessionRows } from "./fixtures";

// Minting and revoking customer portal links (docs/portal.md), and /v1 refusing their tokens.

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

describe("POST /v1/accounts/{account_id}/portal-sessions", () => {
	it("mints a session: a pst_ token of 256 random bits, in the url's fragment only, for an hour by default", async () => {
		const account = await createAccount();
		const response = await post(`/v1/accounts/${account.id}/portal-sessions`, {});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		const session = response.body;
		expect(Object.keys(session).sort()).toEqual(
			["account_id", "created_at", "expires_at", "id", "token", "url"].sort(),
		);
		expect(session.id).toMatch(/^pss_[0-9a-z]{26}$/);
		expect(session.account_id).toBe(account.id);
		expect(session.token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
		expect(session.url).toBe(`https://billing.test/portal#token=${session.token}`);
		const url = new URL(session.url);
		expect(url.pathname).toBe("/portal");
		expect(url.search).toBe("");
		expect(url.pathname + url.search).not.toContain(session.token);
		expect(session.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		expect(seconds(session.created_at, session.expires_at)).toBe(3600);
	});

	it("gives every session its own token", async () => {
		const account = await createAccount();
		const tokens = new Set<string>();
		for (let i = 0; i < 5; i++) tokens.add((await mint(account.id)).token);
		expect(tokens.size).toBe(5);
	});

	it("takes expires_in from 60 to 86,400 seconds, and no body at all", async () => {
		const account = await createAccount();
		for (const expiresIn of [60, 900, 86_400]) {
			const session = await mint(account.id, { expires_in: expiresIn });
			expect(seconds(session.created_at, session.expires_at)).toBe(expiresIn);
		}
		const bare = await call("POST", `/v1/accounts/${account.id}/portal-sessions`);
		expect(bare.status, JSON.stringify(bare.body)).toBe(201);
		expect(seconds(bare.body.created_at, bare.body.expires_at)).toBe(3600);
	});

	it("stores only the SHA-256 of the token", async () => {
		const account = await createAccount();
		const session = await mint(account.id);
		const [row] = await sessionRows(session.id);
		expect(row).toMatchObject({
			id: session.id,
			environment: "live",
			account_id: account.id,
			token_hash: sha256Hex(session.token),
			expires_at: session.expires_at,
			revoked_at: null,
			created_at: session.created_at,
		});
		expect(JSON.stringify(row)).not.toContain(session.token.slice(4));
	});

	it.each([
		["expires_in below 60", { expires_in: 59 }, "expires_in"],
		["expires_in above a day", { expires_in: 86_401 }, "expires_in"],
		["a fractional expires_in", { expires_in: 90.5 }, "expires_in"],
		["expires_in as a string", { expires_in: "3600" }, "expires_in"],
		["expires_in null", { expires_in: null }, "expires_in"],
		["an unknown field", { expires_in: 60, account_id: "acct_x" }, "account_id"],
		["a token of its own", { token: "pst_mine" }, "token"],
	])("refuses %s with 400 and stores nothing", async (_label, body, path) => {
		const account = await createAccount();
		const error = expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, body),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toContain(path);
		expect(await sessionRows(undefined, account.id)).toEqual([]);
	});

	it("answers 404 for an unknown account and for one of the other environment", async () => {
		expectError(await post("/v1/accounts/acct_missing/portal-sessions", {}), 404, "not_found");
		const live = await createAccount();
		const testKey = await createKey("read-write", "test");
		expectError(
			await post(`/v1/accounts/${live.id}/portal-sessions`, {}, { key: testKey }),
			404,
			"not_found",
		);
		expect(await sessionRows(undefined, live.id)).toEqual([]);
	});

	it("is for read-write and admin API keys: read-only and SDK keys get 403, no key 401", async () => {
		const account = await createAccount();
		for (const kind of ["read-write", "admin"] as const) {
			const response = await post(
				`/v1/accounts/${account.id}/portal-sessions`,
				{},
				{ key: await createKey(kind) },
			);
			expect(response.status, kind).toBe(201);
		}
		for (const kind of ["read-only", "sdk"] as const) {
			expectError(
				await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { key: await createKey(kind) }),
				403,
				"forbidden",
			);
		}
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { key: null }),
			401,
			"unauthorized",
		);
		expect(await sessionRows(undefined, account.id)).toHaveLength(2);
	});

	it("replays an Idempotency-Key's first session without its token or url", async () => {
		const account = await createAccount();
		const headers = { "Idempotency-Key": `portal-${account.id}` };
		const path = `/v1/accounts/${account.id}/portal-sessions`;
		const first = await post(path, { expires_in: 600 }, { headers });
		expect(first.status).toBe(201);
		expect(first.body.token).toMatch(/^pst_/);
		const replay = await post(path, { expires_in: 600 }, { headers });
		expect(replay.status).toBe(201);
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body).toEqual({ ...first.body, token: null, url: null });
		expect(JSON.stringify(replay.body)).not.toContain(first.body.token.slice(4));
		// Nothing of the token in the stored response either.
		const { results } = await env.DB.prepare("SELECT response_body FROM idempotency_records WHERE key = ?1")
			.bind(headers["Idempotency-Key"])
			.all<{ response_body: string }>();
		expect(results).toHaveLength(1);
		expect(results[0]?.response_body).not.toContain(first.body.token.slice(4));
		expect(await sessionRows(undefined, account.id)).toHaveLength(1);
		expectError(await post(path, { expires_in: 601 }, { headers }), 409, "idempotency_key_reused");
	});
});

describe("DELETE /v1/portal-sessions/{id}", () => {
	it("revokes the session: 204, then 404 for it", async () => {
		const account = await createAccount();
		const session = await mint(account.id);
		const response = await del(`/v1/portal-sessions/${session.id}`);
		expect(response.status).toBe(204);
		expect(response.body).toBeNull();
		const [row] = await sessionRows(session.id);
		expect(row?.revoked_at).toMatch(/Z$/);
		expectError(await del(`/v1/portal-sessions/${session.id}`), 404, "not_found");
		expectError(await del("/v1/portal-sessions/pss_missing"), 404, "not_found");
	});

	it("is for read-write keys; the other environment's sessions are not found", async () => {
		const account = await createAccount();
		const session = await mint(account.id);
		expectError(
			await del(`/v1/portal-sessions/${session.id}`, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
		expectError(
			await del(`/v1/portal-sessions/${session.id}`, { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
		expectError(
			await del(`/v1/portal-sessions/${session.id}`, { key: await createKey("admin", "test") }),
			404,
			"not_found",
		);
		expect((await sessionRows(session.id))[0]?.revoked_at).toBeNull();
		expect(
			(await del(`/v1/portal-sessions/${session.id}`, { key: await createKey("read-write") })).status,
		).toBe(204);
	});
});

describe("/v1 refuses portal tokens", () => {
	it("answers 401 with the usual body and WWW-Authenticate on every route of the table", async () => {
		const account = await createAccount();
		const { token } = await mint(account.id);
		const failures: string[] = [];
		for (const route of Object.keys(routeAccess)) {
			const [method, template] = route.split(" ") as [string, string];
			const path = template.replace("{account_id}", account.id).replace(/\{[^}]+\}/g, "x_1");
			const response = await call(method, path, {
				key: token,
				body: method === "GET" || method === "DELETE" ? undefined : {},
			});
			if (response.status !== 401 || response.body?.error?.code !== "unauthorized") {
				failures.push(`${route}: ${response.status}`);
				continue;
			}
			expect(response.headers.get("WWW-Authenticate"), route).toBe("Bearer");
			expect(response.body.error.request_id, route).toBe(response.headers.get("X-Request-Id"));
		}
		expect(failures).toEqual([]);
		// The operator key still works, so the 401s above are the token's.
		expect((await get(`/v1/accounts/${account.id}`, { key: ADMIN_KEY })).status).toBe(200);
	});
});
