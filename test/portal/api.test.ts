import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/lib/sha256";
import { PORTAL_PATHS } from "../../src/portal/gate";
import { ADMIN_KEY, call, createAccount, createKey, del, expectError, get, post } from "../helpers";
import {
	createPlan,
	currentPeriod,
	customer,
	generateOne,
	instanceKey,
	sendActions,
	subscribe,
} from "../invoicing/fixtures";
import { mint, portalGet } from "./fixtures";

// The customer portal's API (docs/portal.md): read-only, one account, only its own token.

// calls: $0.01 each; base fee $10.
const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

let acme: Awaited<ReturnType<typeof customer>>;
let token: string;
let invoiceId: string;
let otherInvoiceId: string;
let otherAccountId: string;

beforeAll(async () => {
	// Acme: one invoiced subscription, paid; a second subscription with usage this period, an alert and a grant.
	acme = await customer({ base_fee: 49, charges: [] });
	const invoice = await generateOne(currentPeriod(), acme.account.id);
	invoiceId = invoice.id;
	expect((await post(`/v1/invoices/${invoiceId}/pay`, { reference: "wire-1" })).status).toBe(200);
	const metered = await createPlan(plan);
	const agent = instanceKey();
	const live = await subscribe(acme.account.id, metered.id, [agent]);
	await sendActions(Array.from({ length: 37 }, () => ({ agent_key: agent, action_type: "llm_call" })));
	expect((await post("/v1/alerts", { subscription_id: live.id, threshold: 5, name: "Budget" })).status).toBe(
		201,
	);
	expect((await post(`/v1/accounts/${acme.account.id}/credit-grants`, { amount: 25 })).status).toBe(201);
	token = (await mint(acme.account.id)).token;

	const other = await customer({ base_fee: 99, charges: [] });
	otherAccountId = other.account.id;
	otherInvoiceId = (await generateOne(currentPeriod(), other.account.id)).id;
	expect((await post(`/v1/invoices/${otherInvoiceId}/pay`, {})).status).toBe(200);
});

describe("GET /portal/api/overview", () => {
	it("shows the seller, the account, and each subscription's period so far as GET /v1/usage rates it", async () => {
		const response = await portalGet("/overview", token);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.headers.get("Cache-Control")).toBe("private, no-store");
		const overview = response.body;
		expect(overview.seller).toBe("Agent Metering & Billing");
		expect(overview.account).toEqual({
			id: acme.account.id,
			name: "Acme",
			email: "billing@acme.test",
			currency: "USD",
		});
		expect(overview.billing_period).toBe(currentPeriod());
		expect(overview.subscriptions).toHaveLength(2);
		for (const subscription of overview.subscriptions) {
			const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
			expect(usage.status).toBe(200);
			expect(subscription.amount_so_far).toBe(usage.body.total);
			expect(subscription.charges).toEqual(usage.body.charges);
			expect(subscription.usage).toEqual(usage.body.usage);
			expect(subscription.rate_plan_id).toBe(usage.body.rate_plan_id);
			expect(subscription.currency).toBe(usage.body.currency);
			const v1 = await get(`/v1/subscriptions/${subscription.id}`);
			expect(subscription).toMatchObject({ status: v1.body.status, started_at: v1.body.started_at });
			const ratePlan = await get(`/v1/pricing/rate-plans/${subscription.rate_plan_id}`);
			expect(subscription.rate_plan_name).toBe(ratePlan.body.name);
		}
		const metered = overview.subscriptions.find((s: { charges: unknown[] }) => s.charges.length > 1);
		expect(metered.amount_so_far).toBe(10.37);
		expect(metered.usage).toEqual([{ kind: "action", type: "llm_call", count: 37, value: null }]);
	});

	it("lists the alerts of those subscriptions and the credits, as /v1 shows them", async () => {
		const { body: overview } = await portalGet("/overview", token);
		const alerts = (
			await Promise.all(
				overview.subscriptions.map(
					async (s: { id: string }) => (await get(`/v1/alerts?subscription_id=${s.id}`)).body.alerts,
				),
			)
		).flat();
		expect(alerts).toHaveLength(1);
		expect(overview.alerts).toEqual(alerts);
		const balance = (await get(`/v1/accounts/${acme.account.id}/balance`)).body;
		const grants = (await get(`/v1/accounts/${acme.account.id}/credit-grants`)).body.credit_grants;
		expect(overview.credits).toEqual({
			currency: balance.currency,
			available: balance.available,
			pending_usage: balance.pending_usage,
			projected: balance.projected,
			grants,
		});
		expect(overview.credits.available).toBe(25);
	});

	it("never shows the seller's margin alerts", async () => {
		const { body: before } = await portalGet("/overview", token);
		const [budget] = before.alerts as { subscription_id: string }[];
		const margin = await post("/v1/alerts", {
			subscription_id: budget?.subscription_id,
			type: "margin",
			threshold: 30,
		});
		expect(margin.status).toBe(201);
		const { body: after } = await portalGet("/overview", token);
		expect(after.alerts).toEqual(before.alerts);
		expect(after.alerts.map((alert: { type: string }) => alert.type)).toEqual(["usage"]);
	});
});

describe("GET /portal/api/invoices, /invoices/{id}, /invoices/{id}/pdf and /payments", () => {
	it("lists the account's invoices as /v1 does, and only them", async () => {
		const response = await portalGet("/invoices", token);
		expect(response.status).toBe(200);
		const v1 = await get(`/v1/invoices?account_id=${acme.account.id}`);
		expect(response.body).toEqual(v1.body);
		expect(response.body.invoices.map((i: { id: string }) => i.id)).toEqual([invoiceId]);
		expect(response.body).toMatchObject({ total: 1, limit: 20, offset: 0 });
		const paid = await portalGet("/invoices?status=paid&limit=5", token);
		expect(paid.body).toMatchObject({ total: 1, limit: 5 });
		expect((await portalGet("/invoices?status=open", token)).body.total).toBe(0);
	});

	it("shows one invoice as /v1 does, and its PDF", async () => {
		const response = await portalGet(`/invoices/${invoiceId}`, token);
		expect(response.status).toBe(200);
		expect(response.body).toEqual((await get(`/v1/invoices/${invoiceId}`)).body);
		const pdf = await exports.default.fetch(
			new Request(`https://billing.test/portal/api/invoices/${invoiceId}/pdf`, {
				headers: { Authorization: `Bearer ${token}` },
			}),
		);
		expect(pdf.status).toBe(200);
		expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
		expect(pdf.headers.get("Cache-Control")).toBe("private, no-store");
		const bytes = new Uint8Array(await pdf.arrayBuffer());
		expect(new TextDecoder("latin1").decode(bytes.slice(0, 8))).toMatch(/^%PDF-1\./);
		const v1 = await exports.default.fetch(
			new Request(`https://billing.test/v1/invoices/${invoiceId}/pdf`, {
				headers: { Authorization: `Bearer ${ADMIN_KEY}` },
			}),
		);
		// The same document, but for its creation date: sizes within a few bytes.
		expect(Math.abs((await v1.arrayBuffer()).byteLength - bytes.length)).toBeLessThan(64);
	});

	it("lists the account's payments as /v1 does, and only them", async () => {
		const response = await portalGet("/payments", token);
		expect(response.status).toBe(200);
		expect(response.body).toEqual((await get(`/v1/payments?account_id=${acme.account.id}`)).body);
		expect(response.body.payments).toHaveLength(1);
		expect(response.body.payments[0]).toMatchObject({ invoice_id: invoiceId, reference: "wire-1" });
	});

	it("validates its query as /v1 does", async () => {
		expectError(await portalGet("/invoices?limit=0", token), 400, "validation_error");
		expectError(await portalGet("/invoices?limit=1&limit=2", token), 400, "validation_error");
		expectError(await portalGet(`/invoices?account_id=${otherAccountId}`, token), 400, "validation_error");
		expectError(await portalGet("/payments?status=paid", token), 400, "validation_error");
	});
});

describe("isolation: one account, one environment", () => {
	it("answers 404 for every other account's invoice, as for an unknown one", async () => {
		const others = (await get("/v1/invoices?limit=100")).body.invoices
			.map((i: { id: string; account_id: string }) => i)
			.filter((i: { account_id: string }) => i.account_id !== acme.account.id);
		expect(others.length).toBeGreaterThan(0);
		for (const invoice of [...others, { id: "inv_missing" }]) {
			expectError(await portalGet(`/invoices/${invoice.id}`, token), 404, "not_found");
			expectError(await portalGet(`/invoices/${invoice.id}/pdf`, token), 404, "not_found");
		}
		const payments = (await portalGet("/payments?limit=100", token)).body.payments;
		expect(payments.map((p: { invoice_id: string }) => p.invoice_id)).not.toContain(otherInvoiceId);
	});

	it("shows a test-environment account only its own data", async () => {
		const testKey = await createKey("admin", "test");
		const testCustomer = await customer({ base_fee: 5, charges: [] }, { key: testKey });
		const testInvoice = await generateOne(currentPeriod(), testCustomer.account.id, testKey);
		const testToken = (await mint(testCustomer.account.id, {}, testKey)).token;
		const overview = await portalGet("/overview", testToken);
		expect(overview.status).toBe(200);
		expect(overview.body.account.id).toBe(testCustomer.account.id);
		expect((await portalGet("/invoices", testToken)).body.invoices.map((i: { id: string }) => i.id)).toEqual([
			testInvoice.id,
		]);
		expectError(await portalGet(`/invoices/${invoiceId}`, testToken), 404, "not_found");
		expectError(await portalGet(`/invoices/${testInvoice.id}`, token), 404, "not_found");
	});
});

describe("who may call it", () => {
	it("answers 401 without a token, with a malformed or unknown one, and to every API or SDK key", async () => {
		const keys: [string, string | null][] = [
			["no token", null],
			["operator key", ADMIN_KEY],
			["admin key", await createKey("admin")],
			["read-write key", await createKey("read-write")],
			["read-only key", await createKey("read-only")],
			["SDK key", await createKey("sdk")],
			["test SDK key", await createKey("sdk", "test")],
			["unknown token", `pst_${"A".repeat(43)}`],
			["short token", "pst_abc"],
			["token without its prefix", token.slice(4)],
		];
		for (const path of PORTAL_PATHS) {
			const concrete = path.replace("{invoice_id}", invoiceId);
			for (const [label, key] of keys) {
				const response = await call("GET", concrete, { key });
				expectError(response, 401, "unauthorized");
				expect(response.headers.get("WWW-Authenticate"), `${label} ${path}`).toBe("Bearer");
			}
		}
		const basic = await call("GET", "/portal/api/overview", {
			key: null,
			headers: { Authorization: `Basic ${token}` },
		});
		expectError(basic, 401, "unauthorized");
	});

	it("answers 401 at once after the session is revoked", async () => {
		const session = await mint(acme.account.id);
		expect((await portalGet("/overview", session.token)).status).toBe(200);
		expect((await del(`/v1/portal-sessions/${session.id}`)).status).toBe(204);
		for (const path of PORTAL_PATHS) {
			expectError(
				await call("GET", path.replace("{invoice_id}", invoiceId), { key: session.token }),
				401,
				"unauthorized",
			);
		}
	});

	it("answers 401 once the session has expired", async () => {
		// A session minted with the shortest expiry, then moved to the past; and one stored already expired.
		const session = await mint(acme.account.id, { expires_in: 60 });
		expect((await portalGet("/invoices", session.token)).status).toBe(200);
		await env.DB.prepare("UPDATE portal_sessions SET expires_at = ?2 WHERE id = ?1")
			.bind(session.id, new Date(Date.now() - 1).toISOString())
			.run();
		expectError(await portalGet("/invoices", session.token), 401, "unauthorized");

		const stale = `pst_${"s".repeat(43)}`;
		await env.DB.prepare(
			"INSERT INTO portal_sessions (id, environment, account_id, token_hash, expires_at, revoked_at, created_at) VALUES (?1, 'live', ?2, ?3, ?4, NULL, ?5)",
		)
			.bind(
				"pss_stale",
				acme.account.id,
				sha256Hex(stale),
				"2026-01-01T01:00:00.000Z",
				"2026-01-01T00:00:00.000Z",
			)
			.run();
		expectError(await portalGet("/overview", stale), 401, "unauthorized");
	});

	it("is read-only: other methods answer 405, unknown paths 404", async () => {
		for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
			for (const path of PORTAL_PATHS) {
				const concrete = path.replace("{invoice_id}", invoiceId);
				const response = await call(method, concrete, { key: token, body: {} });
				expectError(response, 405, "method_not_allowed");
				expect(response.headers.get("Allow")).toBe("GET");
			}
		}
		expectError(await portalGet("/accounts", token), 404, "not_found");
		expectError(await portalGet(`/invoices/${invoiceId}/void`, token), 404, "not_found");
		// Nothing changed: the invoice is still paid, the session still works.
		expect((await get(`/v1/invoices/${invoiceId}`)).body.status).toBe("paid");
		expect((await portalGet("/overview", token)).status).toBe(200);
	});

	it("counts requests per session like a key, with the rate-limit headers", async () => {
		const session = await mint(acme.account.id);
		const first = await portalGet("/invoices", session.token);
		const second = await portalGet("/invoices", session.token);
		expect(first.headers.get("X-RateLimit-Limit")).toBe("1000");
		expect(Number(second.headers.get("X-RateLimit-Remaining"))).toBe(
			Number(first.headers.get("X-RateLimit-Remaining")) - 1,
		);
		expect(Number(first.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(Date.now() / 1000);
		const other = await mint(acme.account.id);
		expect((await portalGet("/invoices", other.token)).headers.get("X-RateLimit-Remaining")).toBe("999");
	});

	it("answers 429 with Retry-After once the session's window is used up, and keeps other sessions apart", async () => {
		const session = await mint(acme.account.id);
		// The whole window, taken at the session's own rate limiter.
		const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(session.id));
		await limiter.lease(1000, 1000, null);
		const refused = await portalGet("/overview", session.token);
		expectError(refused, 429, "rate_limited");
		expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
		expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
		expect((await portalGet("/overview", token)).status).toBe(200);
	});

	it("shows an account without any data yet", async () => {
		const empty = await createAccount(undefined, { name: "Quiet Co" });
		const quiet = (await mint(empty.id)).token;
		const overview = await portalGet("/overview", quiet);
		expect(overview.status).toBe(200);
		expect(overview.body).toMatchObject({
			account: { id: empty.id, name: "Quiet Co" },
			subscriptions: [],
			alerts: [],
			credits: { available: 0, grants: [] },
		});
		expect((await portalGet("/invoices", quiet)).body).toEqual({
			invoices: [],
			total: 0,
			limit: 20,
			offset: 0,
		});
		expect((await portalGet("/payments", quiet)).body.total).toBe(0);
	});
});
