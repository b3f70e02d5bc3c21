/** What an audit record says: who, what, which fields from what to what; and what never gets one. */
import { createExecutionContext, createMessageBatch, createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import type { InvoiceJob } from "../../src/invoicing/jobs";
import { handleInvoiceBatch } from "../../src/invoicing/monthly";
import { cancelDueSubscriptions } from "../../src/subscriptions/scheduled";
import { ADMIN_KEY, createAccount, createKey, del, expectError, patch, post } from "../helpers";
import { currentPeriod } from "../invoicing/fixtures";
import { createPlan, subscribe, uniqueKey } from "../subscriptions/fixtures";
import { captureQueue, createEndpoint, stubReceiver } from "../webhooks/fixtures";
import { allRecordText, prefixOf, recordCount, recordsOf } from "./fixtures";

const worker: ExportedHandler<Env> = entry;

afterEach(() => {
	vi.restoreAllMocks();
});

describe("the actor", () => {
	it("is the operator (no key id), an admin key, a read-write key, each with its prefix and the request id", async () => {
		const admin = await createKey("admin");
		const adminId = (await recordsOf()).at(-1)?.resource_id;
		const readWrite = await createKey("read-write");
		const readWriteId = (await recordsOf()).at(-1)?.resource_id;

		const created = await post(
			"/v1/agents",
			{ name: "Scout", type: "custom" },
			{
				headers: { "X-Request-Id": "req-audit-operator" },
			},
		);
		await patch(`/v1/agents/${created.body.id}`, { name: "Scout 2" }, { key: admin });
		await patch(`/v1/agents/${created.body.id}`, { description: "Finds leads" }, { key: readWrite });

		const records = await recordsOf(created.body.id);
		expect(records.map((r) => [r.actor_type, r.key_id, r.key_prefix])).toEqual([
			["operator", null, prefixOf(ADMIN_KEY)],
			["api_key", adminId, prefixOf(admin)],
			["api_key", readWriteId, prefixOf(readWrite)],
		]);
		expect(records[0]).toMatchObject({
			id: expect.stringMatching(/^aud_/),
			environment: "live",
			action: "agent.created",
			resource_type: "agent",
			resource_id: created.body.id,
			request_id: "req-audit-operator",
			changes: { name: ["Scout"], type: ["custom"], description: [null] },
		});
		// Without an X-Request-Id, the one the service made and answered with.
		const noHeader = await post("/v1/agents", { name: "Other", type: "custom" });
		expect((await recordsOf(noHeader.body.id))[0]?.request_id).toBe(noHeader.headers.get("X-Request-Id"));
	});

	it("records a test-environment key's changes in the test environment", async () => {
		const testAdmin = await createKey("admin", "test");
		const agent = await post("/v1/agents", { name: "T", type: "custom" }, { key: testAdmin });
		expect((await recordsOf(agent.body.id))[0]).toMatchObject({ environment: "test", actor_type: "api_key" });
		// A key the operator makes for the test environment is recorded where that environment's admins look.
		const made = (await recordsOf()).find((r) => r.action === "api_key.created" && r.environment === "test");
		expect(made).toMatchObject({ actor_type: "operator", changes: { environment: ["test"] } });
	});

	it("is never an SDK key: what SDK keys send (events) is exempt", async () => {
		const { keys } = await subscribe();
		const sdk = await createKey("sdk");
		const before = await recordCount();
		const sent = await post("/v1/actions", { agent_key: keys[0], action_type: "llm_call" }, { key: sdk });
		expect(sent.status).toBe(201);
		expect(await recordCount()).toBe(before);
	});
});

describe("changes", () => {
	it("lists [before, after] of each field a PATCH changed, and nothing it left as it was", async () => {
		const account = await createAccount(ADMIN_KEY, { name: "Acme", external_id: "crm-1" });
		const response = await patch(`/v1/accounts/${account.id}`, {
			name: "Acme Inc",
			email: "billing@acme.test",
			billing_address: { city: "Berlin" },
			net_terms_days: 14,
		});
		expect(response.status).toBe(200);
		const [created, updated] = await recordsOf(account.id);
		expect(created?.changes).toMatchObject({ name: ["Acme"], external_id: ["crm-1"], net_terms_days: [30] });
		// account.created records the account's settings, in this order: no id, grace days or creation time.
		expect(Object.keys(created?.changes ?? {})).toEqual([
			"name",
			"email",
			"billing_address",
			"currency",
			"external_id",
			"net_terms_days",
			"payment_provider",
			"stripe_customer_id",
			"stripe_payment_method_id",
			"block_on_failed_payment",
			"parent_account_id",
			"billing",
			"use_parent_credits",
		]);
		expect(updated).toMatchObject({ action: "account.updated", resource_type: "account" });
		expect(updated?.changes).toEqual({
			name: ["Acme", "Acme Inc"],
			billing_address: [null, { city: "Berlin" }],
			net_terms_days: [30, 14],
		});
	});

	it("names the transitions of invoices, keys, sessions and subscriptions", async () => {
		const { subscription } = await subscribe();
		const other = await createPlan({ base_fee: 5 });
		await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: other.id });
		await post(`/v1/subscriptions/${subscription.id}/cancel`);
		expect((await recordsOf(subscription.id)).map((r) => [r.action, r.changes])).toEqual([
			["subscription.created", expect.objectContaining({ rate_plan_id: [subscription.rate_plan_id] })],
			[
				"subscription.updated",
				{
					pending_rate_plan_id: [null, other.id],
					pending_plan_change: [
						null,
						{ rate_plan_id: other.id, version: 1, at: expect.stringMatching(/-01T00:00:00\.000Z$/) },
					],
				},
			],
			[
				"subscription.cancelled",
				{
					status: ["active", "cancelled"],
					cancelled_at: [null, expect.any(String)],
					pending_rate_plan_id: [other.id, null],
				},
			],
		]);
		const key = await post("/v1/api-keys", { type: "sdk" });
		await del(`/v1/api-keys/${key.body.id}`);
		expect((await recordsOf(key.body.id)).map((r) => r.action)).toEqual([
			"api_key.created",
			"api_key.revoked",
		]);
	});
});

describe("no record", () => {
	it("for refused requests: validation, not found, conflict, forbidden, unauthorized", async () => {
		const externalId = `crm-${uniqueKey()}`;
		await createAccount(ADMIN_KEY, { external_id: externalId });
		const other = await createAccount(ADMIN_KEY);
		const readOnly = await createKey("read-only");
		const { subscription } = await subscribe();
		await post(`/v1/subscriptions/${subscription.id}/cancel`);

		const before = await recordCount();
		expectError(await post("/v1/agents", { name: "" }), 400, "validation_error");
		expectError(await patch("/v1/agents/agt_unknown", { name: "x" }), 404, "not_found");
		expectError(await del("/v1/api-keys/key_unknown"), 404, "not_found");
		expectError(await patch(`/v1/accounts/${other.id}`, { external_id: externalId }), 409, "conflict");
		expectError(await post(`/v1/subscriptions/${subscription.id}/cancel`), 409, "conflict");
		expectError(await post("/v1/agents", { name: "x", type: "custom" }, { key: readOnly }), 403, "forbidden");
		expectError(
			await post("/v1/agents", { name: "x", type: "custom" }, { key: "sk_api_unknownunknown" }),
			401,
			"unauthorized",
		);
		expect(await recordCount()).toBe(before);
	});

	it("for an idempotent replay: the first request's record stands alone", async () => {
		const headers = { "Idempotency-Key": `idem-${uniqueKey()}` };
		const first = await post("/v1/agents", { name: "Once", type: "custom" }, { headers });
		const replay = await post("/v1/agents", { name: "Once", type: "custom" }, { headers });
		expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
		expect(replay.body.id).toBe(first.body.id);
		expect(await recordsOf(first.body.id)).toHaveLength(1);
		const before = await recordCount();
		await post("/v1/api-keys", { type: "sdk" }, { headers });
		await post("/v1/api-keys", { type: "sdk" }, { headers });
		expect(await recordCount()).toBe(before + 1);
	});
});

describe("secrets", () => {
	it("never appear: no key, webhook secret, portal token, URL carrying one, nor their hashes", async () => {
		const key = await post("/v1/api-keys", { type: "api", permission: "admin", name: "ops" });
		const sdk = await post("/v1/api-keys", { type: "sdk" });
		const endpoint = await createEndpoint({
			url: "https://hooks.example.com/services/T0/B0/s3cr3tT0ken?sig=abc",
		});
		await patch(`/v1/webhooks/${endpoint.id}`, { url: "https://hooks.example.com/services/T1/B1/n3wT0ken" });
		const account = await createAccount();
		const session = await post(`/v1/accounts/${account.id}/portal-sessions`, {});
		expect(session.status).toBe(201);

		const text = await allRecordText();
		const hashes = await env.DB.prepare(
			"SELECT hash AS h FROM api_keys UNION ALL SELECT token_hash FROM portal_sessions UNION ALL SELECT secret FROM webhook_endpoints",
		).all<{ h: string }>();
		const forbidden = [
			key.body.key,
			sdk.body.key,
			ADMIN_KEY,
			endpoint.secret,
			session.body.token,
			session.body.url,
			"s3cr3tT0ken",
			"n3wT0ken",
			"sig=abc",
			...hashes.results.map((r) => r.h),
		];
		for (const secret of forbidden) {
			expect(typeof secret).toBe("string");
			expect(text.includes(secret as string), `a record holds ${String(secret).slice(0, 12)}…`).toBe(false);
		}
		// What is kept instead: the display prefix, and the URL's origin.
		expect((await recordsOf(key.body.id))[0]?.changes).toMatchObject({
			prefix: [key.body.prefix],
			name: ["ops"],
		});
		expect((await recordsOf(endpoint.id)).map((r) => r.changes.url)).toEqual([
			["https://hooks.example.com/…"],
			["https://hooks.example.com/…", "https://hooks.example.com/…"],
		]);
		expect((await recordsOf(session.body.id))[0]?.changes).toEqual({
			account_id: [account.id],
			expires_at: [session.body.expires_at],
		});
	});
});

describe("retention", () => {
	it("no cron deletes or changes a record, even 401 days on", async () => {
		await createAccount();
		const before = await recordsOf();
		vi.spyOn(env.INVOICE_QUEUE, "sendBatch").mockResolvedValue({
			metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } },
		});
		const later = Date.now() + 401 * 86_400_000;
		const firstOfMonth = Date.parse(`${new Date(later).toISOString().slice(0, 7)}-01T00:05:00.000Z`);
		for (const [cron, at] of [
			["*/5 * * * *", later],
			["5 0 1 * *", firstOfMonth],
		] as const) {
			await worker.scheduled?.(
				createScheduledController({ cron, scheduledTime: at }),
				env,
				createExecutionContext(),
			);
		}
		expect((await recordsOf()).slice(0, before.length)).toEqual(before);
	});
});

describe("the system", () => {
	it("cancels at period end as the system, with no key and no request id", async () => {
		const { subscription } = await subscribe();
		const scheduled = await post(`/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
		expect(scheduled.status).toBe(200);
		const cancelled = await cancelDueSubscriptions(
			env,
			new Date(Date.parse(scheduled.body.cancel_at) + 60_000),
		);
		expect(cancelled).toContain(subscription.id);
		const records = await recordsOf(subscription.id);
		expect(records.map((r) => [r.action, r.actor_type])).toEqual([
			["subscription.created", "operator"],
			["subscription.updated", "operator"],
			["subscription.cancelled", "system"],
		]);
		expect(records[2]).toMatchObject({ key_id: null, key_prefix: null, request_id: null });
		expect(records[1]?.changes).toEqual({ cancel_at: [null, scheduled.body.cancel_at] });
	});

	it("invoices through the monthly queue as the system", async () => {
		const { account } = await subscribe();
		const batch = createMessageBatch<InvoiceJob>("invoice-generation", [
			{
				id: "job-audit",
				timestamp: new Date(),
				attempts: 1,
				body: { environment: "live", billingPeriod: currentPeriod(), accountId: account.id },
			},
		]);
		await handleInvoiceBatch(batch, env);
		const [invoice] = (await recordsOf()).filter(
			(r) => r.action === "invoice.created" && r.changes.account_id?.[0] === account.id,
		);
		expect(invoice).toMatchObject({
			actor_type: "system",
			key_id: null,
			request_id: null,
			resource_type: "invoice",
			resource_id: expect.stringMatching(/^inv_/),
			changes: expect.objectContaining({ billing_period: [currentPeriod()], status: ["open"] }),
		});
	});

	it("disables an endpoint whose receiver answers 410 Gone as the system", async () => {
		captureQueue();
		stubReceiver(() => new Response("gone", { status: 410 }));
		const endpoint = await createEndpoint();
		const sent = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.created" });
		expect(sent.status).toBe(200);
		const records = await recordsOf(endpoint.id);
		expect(records.map((r) => [r.action, r.actor_type, r.request_id === null])).toEqual([
			["webhook_endpoint.created", "operator", false],
			["webhook_endpoint.disabled", "system", true],
		]);
		expect(records[1]?.changes).toEqual({ status: ["enabled", "disabled"] });
	});
});
