/**
 * Black-box checks of the customer portal (docs/portal.md): session minting, token isolation from /v1, 401 for
 * every other credential, 404 for other accounts' ids, replays without the token.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, call, createAccount, createKey, del, expectError, get, post } from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";

async function session(accountId: string, body: Record<string, unknown> = {}, key = ADMIN_KEY) {
	const r = await post(`/v1/accounts/${accountId}/portal-sessions`, body, { key });
	expect(r.status, JSON.stringify(r.body)).toBe(201);
	return r.body as {
		id: string;
		account_id: string;
		token: string;
		url: string;
		expires_at: string;
		created_at: string;
	};
}
const portal = (path: string, key: string | null) => get(`/portal/api${path}`, { key });

describe("portal sessions", () => {
	it("answer id, account_id, a pst_ token of 128+ bits, a url with the token in its fragment only, expires_at", async () => {
		const account = await createAccount();
		const s = await session(account.id);
		expect(Object.keys(s).sort()).toEqual(["account_id", "created_at", "expires_at", "id", "token", "url"]);
		expect(s.account_id).toBe(account.id);
		expect(s.token).toMatch(/^pst_[A-Za-z0-9_-]{22,}$/);
		const url = new URL(s.url);
		expect(url.pathname).toBe("/portal");
		expect(url.search).toBe("");
		expect(url.hash).toContain(s.token);
		expect(`${url.origin}${url.pathname}${url.search}`).not.toContain(s.token);
		expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(3600_000);
		for (const n of [60, 86_400]) {
			const t = await session(account.id, { expires_in: n });
			expect(Date.parse(t.expires_at) - Date.parse(t.created_at)).toBe(n * 1000);
		}
	});

	it.each([[59], [86_401], [0], [3600.5], ["3600"], [null]])("refuse expires_in %j with 400", async (n) => {
		const account = await createAccount();
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: n }),
			400,
			"validation_error",
		);
		const { results } = await env.DB.prepare("SELECT id FROM portal_sessions WHERE account_id = ?")
			.bind(account.id)
			.all();
		expect(results).toHaveLength(0);
	});

	it("answer 404 for an unknown or other-environment account, 403 to read-only and SDK keys", async () => {
		expectError(await post("/v1/accounts/acct_unknown/portal-sessions", {}), 404, "not_found");
		const account = await createAccount();
		const testAdmin = await createKey("admin", "test");
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { key: testAdmin }),
			404,
			"not_found",
		);
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
		await session(account.id, {}, await createKey("read-write"));
		expectError(await del("/v1/portal-sessions/pst_unknown"), 404, "not_found");
	});

	it("replayed with the same Idempotency-Key: the same body with token null, and no new session", async () => {
		const account = await createAccount();
		const headers = { "Idempotency-Key": `portal-${crypto.randomUUID()}` };
		const first = await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: 600 }, { headers });
		expect(first.status).toBe(201);
		const again = await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: 600 }, { headers });
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body.token).toBeNull();
		expect(again.body.id).toBe(first.body.id);
		expect(JSON.stringify(again.body)).not.toContain(first.body.token);
		const { results } = await env.DB.prepare("SELECT id FROM portal_sessions WHERE account_id = ?")
			.bind(account.id)
			.all();
		expect(results).toHaveLength(1);
		// the first token still works
		expect((await portal("/overview", first.body.token)).status).toBe(200);
	});
});

describe("the portal API", () => {
	it("shows the account and refuses every credential but a live portal token", async () => {
		const { account } = await customer({ base_fee: 10, charges: [] });
		const s = await session(account.id);
		const overview = await portal("/overview", s.token);
		expect(overview.status, JSON.stringify(overview.body)).toBe(200);
		expect(overview.body.account).toMatchObject({ id: account.id, currency: "USD" });
		expect(Object.keys(overview.body.account)).toEqual(
			expect.arrayContaining(["id", "name", "email", "currency"]),
		);

		for (const key of [
			null,
			ADMIN_KEY,
			await createKey("admin"),
			await createKey("read-only"),
			await createKey("sdk"),
			"pst_unknowntokenunknowntoken",
			"garbage",
		]) {
			for (const path of ["/overview", "/invoices"]) {
				const r = await portal(path, key);
				expectError(r, 401, "unauthorized");
				expect(r.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
			}
		}
		// /v1 refuses portal tokens
		for (const path of ["/v1/accounts", `/v1/accounts/${account.id}`, "/v1/invoices", "/v1/usage"]) {
			expectError(await get(path, { key: s.token }), 401, "unauthorized");
		}
		expectError(
			await post("/v1/agents", { name: "x", type: "custom" }, { key: s.token }),
			401,
			"unauthorized",
		);
		// revoked → 401
		expect((await del(`/v1/portal-sessions/${s.id}`)).status).toBe(204);
		expectError(await portal("/overview", s.token), 401, "unauthorized");
	});

	it("an expired token answers 401", async () => {
		const account = await createAccount();
		const s = await session(account.id, { expires_in: 60 });
		await env.DB.prepare("UPDATE portal_sessions SET expires_at = ? WHERE id = ?")
			.bind(new Date(Date.now() - 1000).toISOString(), s.id)
			.run();
		expectError(await portal("/overview", s.token), 401, "unauthorized");
	});

	it("lists only its account's invoices; another account's invoice id answers 404; read-only", async () => {
		const mine = await customer({ base_fee: 10, charges: [] });
		const theirs = await customer({ base_fee: 20, charges: [] });
		const myInvoice = await generateOne(currentPeriod(), mine.account.id);
		const theirInvoice = await generateOne(currentPeriod(), theirs.account.id);
		const s = await session(mine.account.id);
		const list = await portal("/invoices", s.token);
		expect(list.status).toBe(200);
		expect(list.body.invoices.map((i: { id: string }) => i.id)).toEqual([myInvoice.id]);
		expect((await portal(`/invoices/${myInvoice.id}`, s.token)).body.id).toBe(myInvoice.id);
		const pdf = await portal(`/invoices/${myInvoice.id}/pdf`, s.token);
		expect(pdf.status).toBe(200);
		expect(pdf.headers.get("Content-Type")).toContain("application/pdf");
		expectError(await portal(`/invoices/${theirInvoice.id}`, s.token), 404, "not_found");
		expectError(await portal(`/invoices/${theirInvoice.id}/pdf`, s.token), 404, "not_found");
		const write = await post(`/portal/api/invoices/${myInvoice.id}/pay`, {}, { key: s.token });
		expect([404, 405]).toContain(write.status);
		expect((await get(`/v1/invoices/${myInvoice.id}`)).body.status).toBe(myInvoice.status);
	});
});

describe("the portal API, further", () => {
	it("answers lists in the contract's shape, X-Request-Id on every answer, 404 for unknown routes", async () => {
		const { account } = await customer({ base_fee: 10, charges: [] });
		await generateOne(currentPeriod(), account.id);
		const s = await session(account.id);
		const list = await portal("/invoices", s.token);
		expect(list.body).toMatchObject({ total: 1, limit: 20, offset: 0 });
		expect(list.headers.get("X-Request-Id")).toBeTruthy();
		expectError(await portal("/invoices?limit=0", s.token), 400, "validation_error");
		expectError(await portal("/nope", s.token), 404, "not_found");
		const overview = await portal("/overview", s.token);
		expect(overview.headers.get("X-Request-Id")).toBeTruthy();
		expect(overview.body.account.name).toBe("Acme");
		expect(overview.body.account.email).toBe("billing@acme.test");
		const unauth = await portal("/overview", null);
		expect(unauth.headers.get("X-Request-Id")).toBe(unauth.body.error.request_id);
	});

	it("a session of the test environment shows only that environment's account", async () => {
		const testAdmin = await createKey("admin", "test");
		const account = await createAccount(testAdmin, { name: "Test Co" });
		const s = await session(account.id, {}, testAdmin);
		const overview = await portal("/overview", s.token);
		expect(overview.status).toBe(200);
		expect(overview.body.account.id).toBe(account.id);
		expectError(await del(`/v1/portal-sessions/${s.id}`), 404, "not_found");
		expect((await del(`/v1/portal-sessions/${s.id}`, { key: testAdmin })).status).toBe(204);
		expectError(await portal("/overview", s.token), 401, "unauthorized");
	});
});

describe("portal sessions, conventions", () => {
	it("are created with no body at all; unknown fields 400; a changed body with the same key 409", async () => {
		const account = await createAccount();
		const bare = await call("POST", `/v1/accounts/${account.id}/portal-sessions`);
		expect(bare.status, JSON.stringify(bare.body)).toBe(201);
		expect(bare.body.token).toMatch(/^pst_/);
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: 600, scope: "all" }),
			400,
			"validation_error",
		);
		const headers = { "Idempotency-Key": `p-${crypto.randomUUID()}` };
		expect(
			(await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: 600 }, { headers })).status,
		).toBe(201);
		expectError(
			await post(`/v1/accounts/${account.id}/portal-sessions`, { expires_in: 900 }, { headers }),
			409,
			"idempotency_key_reused",
		);
	});
});

describe("docs/portal.md's promises", () => {
	it("405 for other methods, rate-limit headers, no-store, url null on replay", async () => {
		const account = await createAccount();
		const headers = { "Idempotency-Key": `p-${crypto.randomUUID()}` };
		const s = await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { headers });
		const again = await post(`/v1/accounts/${account.id}/portal-sessions`, {}, { headers });
		expect(again.body.url).toBeNull();
		const token = s.body.token as string;
		const r = await portal("/overview", token);
		expect(r.headers.get("X-RateLimit-Limit")).toBeTruthy();
		expect(r.headers.get("X-RateLimit-Remaining")).toBeTruthy();
		expect(r.headers.get("Cache-Control")).toContain("no-store");
		for (const method of ["POST", "PATCH", "DELETE"]) {
			const w = await call(method, "/portal/api/overview", {
				key: token,
				body: method === "DELETE" ? undefined : {},
			});
			expectError(w, 405, "method_not_allowed");
		}
	});
});

describe("revoking portal sessions", () => {
	it("read-write keys revoke, read-only and SDK keys get 403, the token keeps working until revoked", async () => {
		const account = await createAccount();
		const s = await session(account.id);
		expectError(
			await del(`/v1/portal-sessions/${s.id}`, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
		expectError(await del(`/v1/portal-sessions/${s.id}`, { key: await createKey("sdk") }), 403, "forbidden");
		expect((await portal("/overview", s.token)).status).toBe(200);
		const revoked = await del(`/v1/portal-sessions/${s.id}`, { key: await createKey("read-write") });
		expect(revoked.status).toBe(204);
		expectError(await portal("/invoices", s.token), 401, "unauthorized");
	});
});
