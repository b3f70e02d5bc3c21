/**
 * Black-box checks of the amendments on payments, request bodies, idempotency and contention,
 * written from the contract's text and docs/ alone: payment views carry `kind`; an all-optional POST takes an
 * empty body; an Idempotency-Key replay compares parsed JSON; draft lines and finalize never answer 500 under
 * contention, and a 201 always means the line is on the invoice.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { creditNote, openInvoice, paidInvoice } from "../credit-notes/fixtures";
import { call, createAccount, expectError, get, post } from "../helpers";
import { createPlan, currentPeriod, generate, instanceKey, sdkKey, subscribe } from "../invoicing/fixtures";

const invoiceOf = async (id: string) => (await get(`/v1/invoices/${id}`)).body;

async function computeInvoice(baseFee = 10) {
	const plan = await createPlan({ base_fee: baseFee, charges: [] });
	const account = await createAccount(undefined, { invoice_grace_days: 5 });
	await subscribe(account.id, plan.id, [instanceKey()]);
	const { invoices } = await generate(currentPeriod(), account.id);
	expect(invoices).toHaveLength(1);
	const draft = invoices[0]!;
	expect(draft).toMatchObject({ status: "draft", number: null });
	return draft;
}

const oneOffDescriptions = (invoice: { line_items: { metric: string; description: string }[] }) =>
	invoice.line_items
		.filter((line) => line.metric !== "base_fee")
		.map((line) => line.description)
		.sort();

describe("§37 (§20/§26): every payment view carries kind", () => {
	it("a manual payment is kind 'payment' in GET /v1/payments and in the invoice's payments", async () => {
		const invoice = await paidInvoice(40);
		expect(invoice.payments).toHaveLength(1);
		expect(invoice.payments[0]).toMatchObject({ kind: "payment", amount: 40 });
		const byInvoice = await get(`/v1/payments?invoice_id=${invoice.id}`);
		expect(byInvoice.status).toBe(200);
		expect(byInvoice.body.payments).toHaveLength(1);
		expect(byInvoice.body.payments[0]).toMatchObject({ kind: "payment", amount: 40, invoice_id: invoice.id });
		const byAccount = await get(`/v1/payments?account_id=${invoice.account_id}`);
		expect(byAccount.body.payments.map((p: { kind: string }) => p.kind)).toEqual(["payment"]);
	});

	it("a credit note with refund makes a row of kind 'refund' (negative) in every payment view", async () => {
		const invoice = await paidInvoice(100);
		const note = await creditNote(invoice.id, { amount: 25.5, reason: "duplicate", refund: true });
		expect(note.applied).toEqual({ to_invoice: 0, refunded: 25.5, credited: 0 });

		const listed = (await get(`/v1/payments?invoice_id=${invoice.id}`)).body.payments as {
			kind: string;
			amount: number;
		}[];
		expect(listed).toHaveLength(2);
		const byKind = Object.fromEntries(listed.map((p) => [p.kind, p.amount]));
		expect(byKind).toEqual({ payment: 100, refund: -25.5 });

		const after = await invoiceOf(invoice.id);
		const kinds = (after.payments as { kind: string; amount: number }[])
			.map((p) => [p.kind, p.amount])
			.sort();
		expect(kinds).toEqual([
			["payment", 100],
			["refund", -25.5],
		]);
		expect(after.amount_paid).toBe(74.5);

		// Every row of the list has exactly one of the two kinds.
		const all = (await get(`/v1/payments?account_id=${invoice.account_id}`)).body.payments;
		for (const row of all) expect(["payment", "refund"]).toContain(row.kind);
	});
});

describe("§37 (§1): a POST whose fields are all optional accepts an empty body as {}", () => {
	const bodies: [string, Record<string, string>][] = [
		["no bytes, no Content-Type", {}],
		["no bytes, Content-Type: application/json", { "Content-Type": "application/json" }],
	];

	it.each(bodies)("portal session create — %s → 201 with the default expiry", async (_label, headers) => {
		const account = await createAccount();
		const response = await call("POST", `/v1/accounts/${account.id}/portal-sessions`, { headers });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.token).toMatch(/^pst_/);
		const lifetime = Date.parse(response.body.expires_at) - Date.parse(response.body.created_at);
		expect(lifetime).toBe(3_600_000);
	});

	it.each(bodies)("portal session create — an empty string body (%s) → 201", async (_label, headers) => {
		const account = await createAccount();
		const response = await call("POST", `/v1/accounts/${account.id}/portal-sessions`, { headers, raw: "" });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
	});

	it.each(bodies)("pay {reference?} — %s → 200 paid, reference null", async (_label, headers) => {
		const invoice = await openInvoice(12);
		const response = await call("POST", `/v1/invoices/${invoice.id}/pay`, { headers });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body.status).toBe("paid");
		expect(response.body.payments[0].reference).toBeNull();
	});

	it.each(bodies)("cancel {at_period_end?} — %s → 200 cancelled now", async (_label, headers) => {
		const plan = await createPlan({ base_fee: 1, charges: [] });
		const account = await createAccount();
		const subscription = await subscribe(account.id, plan.id, [instanceKey()]);
		const response = await call("POST", `/v1/subscriptions/${subscription.id}/cancel`, { headers });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body.status).toBe("cancelled");
	});

	it.each(bodies)("void and finalize (no body at all) — %s → 200", async (_label, headers) => {
		const open = await openInvoice(3);
		const voided = await call("POST", `/v1/invoices/${open.id}/void`, { headers });
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(voided.body.status).toBe("void");
		const draft = await computeInvoice(4);
		const finalized = await call("POST", `/v1/invoices/${draft.id}/finalize`, { headers });
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body.number).toMatch(/^INV-\d{6}$/);
	});

	it("a non-JSON Content-Type with bytes is still 415, nothing stored", async () => {
		const account = await createAccount();
		const response = await call("POST", `/v1/accounts/${account.id}/portal-sessions`, {
			headers: { "Content-Type": "text/plain" },
			raw: '{"expires_in":120}',
		});
		expectError(response, 415, "unsupported_media_type");
		const rows = await env.DB.prepare("SELECT count(*) AS n FROM portal_sessions WHERE account_id = ?1")
			.bind(account.id)
			.first<{ n: number }>();
		expect(rows?.n).toBe(0);
	});
});

describe("§37 (§1/§14): an Idempotency-Key replay compares the parsed JSON, not the text", () => {
	const accountsWithEmail = async (email: string) =>
		(
			await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE email = ?1")
				.bind(email)
				.first<{ n: number }>()
		)?.n;

	it("same fields in another order and other whitespace → the first answer, replayed; one account", async () => {
		const key = `idem-${crypto.randomUUID()}`;
		const email = `${key}@acme.test`;
		const headers = { "Content-Type": "application/json", "Idempotency-Key": key };
		const first = await call("POST", "/v1/accounts", {
			headers,
			raw: JSON.stringify({ name: "Order Co", email, billing_address: { city: "Paris", country: "FR" } }),
		});
		expect(first.status, JSON.stringify(first.body)).toBe(201);
		expect(first.headers.get("Idempotent-Replayed")).toBeNull();

		const reordered = `{\n  "billing_address" : { "country":"FR",  "city" : "Paris" },\n\t"email":"${email}" ,"name":  "Order Co"\n}\n`;
		const second = await call("POST", "/v1/accounts", { headers, raw: reordered });
		expect(second.status, JSON.stringify(second.body)).toBe(201);
		expect(second.headers.get("Idempotent-Replayed")).toBe("true");
		expect(second.body).toEqual(first.body);
		expect(await accountsWithEmail(email)).toBe(1);
	});

	it("a different value under the same key → 409 idempotency_key_reused, nothing stored", async () => {
		const key = `idem-${crypto.randomUUID()}`;
		const email = `${key}@acme.test`;
		const headers = { "Content-Type": "application/json", "Idempotency-Key": key };
		const first = await call("POST", "/v1/accounts", { headers, raw: JSON.stringify({ name: "A", email }) });
		expect(first.status).toBe(201);
		const other = await call("POST", "/v1/accounts", {
			headers,
			raw: JSON.stringify({ email, name: "B" }),
		});
		expectError(other, 409, "idempotency_key_reused");
		expect(await accountsWithEmail(email)).toBe(1);
		expect((await get(`/v1/accounts/${first.body.id}`)).body.name).toBe("A");
	});

	it("a number written differently but equal (1 vs 1.0) is the same request (parsed JSON)", async () => {
		const invoice = await openInvoice(50);
		const key = `idem-${crypto.randomUUID()}`;
		const headers = { "Content-Type": "application/json", "Idempotency-Key": key };
		const path = `/v1/invoices/${invoice.id}/credit-notes`;
		const first = await call("POST", path, { headers, raw: '{"amount": 5, "reason": "other"}' });
		expect(first.status, JSON.stringify(first.body)).toBe(201);
		const second = await call("POST", path, { headers, raw: '{"reason":"other","amount":5.0}' });
		expect(second.status, JSON.stringify(second.body)).toBe(201);
		expect(second.headers.get("Idempotent-Replayed")).toBe("true");
		expect(second.body).toEqual(first.body);
		expect((await invoiceOf(invoice.id)).credit_notes).toEqual([first.body.id]);
	});
});

describe("§37 (§6): an event's body idempotency_key and the header both given and different → 400", () => {
	const eventsOf = async (agentKey: string) => {
		const response = await get(`/v1/events?agent_key=${agentKey}`);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		return response.body.events as unknown[];
	};

	it("POST /v1/actions: body 'a', header 'b' → 400 validation_error, nothing recorded", async () => {
		const key = await sdkKey();
		const agentKey = instanceKey("idem");
		const response = await post(
			"/v1/actions",
			{ agent_key: agentKey, action_type: "llm_call", idempotency_key: "body-key" },
			{ key, headers: { "Idempotency-Key": "header-key" } },
		);
		expectError(response, 400, "validation_error");
		expect(await eventsOf(agentKey)).toEqual([]);
	});

	it("POST /v1/outcomes: body and header different → 400 validation_error, nothing recorded", async () => {
		const key = await sdkKey();
		const agentKey = instanceKey("idem");
		const response = await post(
			"/v1/outcomes",
			{ agent_key: agentKey, outcome_type: "lead", value: 3, idempotency_key: "body-key" },
			{ key, headers: { "Idempotency-Key": "header-key" } },
		);
		expectError(response, 400, "validation_error");
		expect(await eventsOf(agentKey)).toEqual([]);
	});

	it("both given and equal → 201, and a repeat is a 200 replay of the same event", async () => {
		const key = await sdkKey();
		const agentKey = instanceKey("idem");
		const body = { agent_key: agentKey, action_type: "llm_call", idempotency_key: "same-key" };
		const options = { key, headers: { "Idempotency-Key": "same-key" } };
		const first = await post("/v1/actions", body, options);
		expect(first.status, JSON.stringify(first.body)).toBe(201);
		const again = await post("/v1/actions", body, options);
		expect(again.status).toBe(200);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body.id).toBe(first.body.id);
		expect(await eventsOf(agentKey)).toHaveLength(1);
	});
});

describe("§37 (§2): contention on draft invoices answers 201/409, never 500", () => {
	it("50 concurrent POST …/lines: each 201 or 409 conflict, and the draft holds exactly the 201s", async () => {
		const draft = await computeInvoice(10);
		const responses = await Promise.all(
			Array.from({ length: 50 }, (_, i) =>
				post(`/v1/invoices/${draft.id}/lines`, { description: `Line ${i}`, amount: i + 1 }),
			),
		);
		const statuses = responses.map((r) => r.status);
		for (const response of responses) {
			expect([201, 409], JSON.stringify(response.body)).toContain(response.status);
			if (response.status === 409) expect(response.body.error.code).toBe("conflict");
		}
		const accepted = responses
			.map((r, i) => (r.status === 201 ? `Line ${i}` : null))
			.filter((d): d is string => d !== null)
			.sort();
		expect(accepted.length, `statuses: ${statuses.join(",")}`).toBeGreaterThan(0);

		const stored = await invoiceOf(draft.id);
		expect(stored.status).toBe("draft");
		expect(oneOffDescriptions(stored)).toEqual(accepted);
		const expectedAmount = 10 + accepted.reduce((sum, d) => sum + Number(d.slice(5)) + 1, 0);
		expect(stored.amount).toBe(expectedAmount);
		const lineRows = await env.DB.prepare("SELECT count(*) AS n FROM invoice_lines WHERE invoice_id = ?1")
			.bind(draft.id)
			.first<{ n: number }>();
		expect(lineRows?.n).toBe(accepted.length + 1);
	});

	it("finalize racing line additions: no 500, and the issued invoice has exactly the lines answered 201", async () => {
		const draft = await computeInvoice(10);
		const lines = Array.from({ length: 20 }, (_, i) =>
			post(`/v1/invoices/${draft.id}/lines`, { description: `Race ${i}`, amount: 1 }),
		);
		const finalize = post(`/v1/invoices/${draft.id}/finalize`);
		const [finalized, ...responses] = await Promise.all([finalize, ...lines]);
		expect([200, 409], JSON.stringify(finalized.body)).toContain(finalized.status);
		for (const response of responses) {
			expect([201, 409], JSON.stringify(response.body)).toContain(response.status);
			if (response.status === 409) expect(response.body.error.code).toBe("conflict");
		}
		if (finalized.status === 409) {
			const retry = await post(`/v1/invoices/${draft.id}/finalize`);
			expect(retry.status, JSON.stringify(retry.body)).toBe(200);
		}
		const accepted = responses
			.map((r, i) => (r.status === 201 ? `Race ${i}` : null))
			.filter((d): d is string => d !== null)
			.sort();
		const issued = await invoiceOf(draft.id);
		expect(issued.status).not.toBe("draft");
		expect(issued.number).toMatch(/^INV-\d{6}$/);
		expect(oneOffDescriptions(issued)).toEqual(accepted);
		expect(issued.amount).toBe(10 + accepted.length);
		if (finalized.status === 200) expect(finalized.body.line_items).toEqual(issued.line_items);
		// After finalizing, a line is refused.
		expectError(
			await post(`/v1/invoices/${draft.id}/lines`, { description: "Late", amount: 1 }),
			409,
			"conflict",
		);
	});
});
