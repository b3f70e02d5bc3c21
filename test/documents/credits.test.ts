import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { periodWindow } from "../../src/billing-period/period";
import { database } from "../../src/db/client";
import type { ComputedInvoice } from "../../src/invoicing/computed";
import { storeInvoices } from "../../src/invoicing/write";
import { Decimal } from "../../src/lib/decimal";
import { createAccount, createKey, expectError, get, post } from "../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generateOne,
	instanceKey,
	outboxEvents,
	sendActions,
	subscribe,
} from "../invoicing/fixtures";

// Prepaid credits (§17): grants, their ledger, the balance, and credits paying invoices when they are created.
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function grant(accountId: string, body: Record<string, unknown>) {
	const response = await post(`/v1/accounts/${accountId}/credit-grants`, body);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; remaining: number; status: string };
}

async function grantsOf(accountId: string) {
	const response = await get(`/v1/accounts/${accountId}/credit-grants?limit=100`);
	expect(response.status).toBe(200);
	return new Map<string, { remaining: number; status: string }>(
		response.body.credit_grants.map((g: { id: string }) => [g.id, g]),
	);
}

/** The grant's ledger as [kind, amount in minor units, invoice] rows, oldest first. */
async function ledgerOf(grantId: string) {
	const { results } = await env.DB.prepare(
		"SELECT kind, amount_minor, invoice_id FROM credit_ledger WHERE grant_id = ?1 ORDER BY created_at, kind = 'expiry', id",
	)
		.bind(grantId)
		.all<{ kind: string; amount_minor: number; invoice_id: string | null }>();
	return results.map((row) => [row.kind, row.amount_minor, row.invoice_id]);
}

/** A new subscription of the account to a plan of only a base fee, invoiced now: one regular invoice. */
async function invoiceOf(accountId: string, baseFee: number, currency = "USD") {
	const plan = await createPlan({ base_fee: baseFee, charges: [], currency });
	await subscribe(accountId, plan.id, [instanceKey()]);
	return generateOne(currentPeriod(), accountId);
}

describe("POST /v1/accounts/{id}/credit-grants", () => {
	it("grants credit in the account's currency, recorded as the first row of its ledger", async () => {
		const account = await createAccount(undefined, { currency: "EUR" });
		const expiresAt = "2099-01-01T00:00:00.000Z";
		const response = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 1000,
			expires_at: "2099-01-01T01:00:00+01:00",
			description: "Annual prepayment",
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^cgr_[0-9a-z]{26}$/),
			account_id: account.id,
			amount: 1000,
			remaining: 1000,
			currency: "EUR",
			expires_at: expiresAt,
			description: "Annual prepayment",
			status: "active",
			recurrence: null,
			rollover_max: null,
			created_at: expect.stringMatching(/Z$/),
		});
		expect(await ledgerOf(response.body.id)).toEqual([["grant", 100000, null]]);
		expect((await get(`/v1/accounts/${account.id}/credit-grants`)).body).toEqual({
			credit_grants: [response.body],
			total: 1,
			limit: 20,
			offset: 0,
		});
	});

	it.each([
		[{ amount: 0 }, "amount"],
		[{ amount: -5 }, "amount"],
		[{ amount: 1e16 }, "amount"],
		[{ amount: 10.005 }, "amount"],
		[{ amount: "10" }, "amount"],
		[{}, "amount"],
		[{ amount: 10, expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
		[{ amount: 10, expires_at: "tomorrow" }, "expires_at"],
		[{ amount: 10, remaining: 10 }, "remaining"],
	])("refuses %j with 400 at %s and stores nothing", async (body, path) => {
		const account = await createAccount();
		const error = expectError(
			await post(`/v1/accounts/${account.id}/credit-grants`, body),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toContain(path);
		expect((await get(`/v1/accounts/${account.id}/credit-grants`)).body.total).toBe(0);
	});

	it("refuses decimals a zero-decimal currency does not have", async () => {
		const account = await createAccount(undefined, { currency: "JPY" });
		expectError(
			await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 100.5 }),
			400,
			"validation_error",
		);
		expect((await grant(account.id, { amount: 100 })).remaining).toBe(100);
	});

	it("answers 404 for an unknown account or one of the other environment, and needs a write key", async () => {
		expectError(await post("/v1/accounts/acct_missing/credit-grants", { amount: 5 }), 404, "not_found");
		const testKey = await createKey("read-write", "test");
		const account = await createAccount();
		expectError(
			await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5 }, { key: testKey }),
			404,
			"not_found",
		);
		expectError(await get(`/v1/accounts/${account.id}/credit-grants`, { key: testKey }), 404, "not_found");
		const readOnly = await createKey("read-only");
		expectError(
			await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5 }, { key: readOnly }),
			403,
			"forbidden",
		);
		expect((await get(`/v1/accounts/${account.id}/credit-grants`, { key: readOnly })).status).toBe(200);
	});
});

describe("credits paying invoices (§17)", () => {
	it("pays two invoices, earliest expiry first, with a grant expiring between them", async () => {
		const account = await createAccount();
		const soon = await grant(account.id, { amount: 50, expires_at: inMs(1500) });
		const never = await grant(account.id, { amount: 100 });
		const later = await grant(account.id, { amount: 20, expires_at: inMs(3_600_000) });

		// Invoice 1, 40.00: the grant expiring soonest pays all of it.
		const first = await invoiceOf(account.id, 40);
		expect(first).toMatchObject({
			amount: 40,
			credits_applied: 40,
			amount_due: 0,
			status: "paid",
			payments: [],
		});
		expect(first.paid_at).toBe(first.issued_at);
		expect(await outboxEvents("invoice.paid", first.id)).toHaveLength(1);
		expect((await get(`/v1/payments?invoice_id=${first.id}`)).body.total).toBe(0);

		await sleep(1600);
		// The first grant expired with 10.00 left; invoice 2, 45.00: the 20.00 expiring in an hour, then 25.00 of
		// the grant that never expires.
		const second = await invoiceOf(account.id, 45);
		expect(second).toMatchObject({ amount: 45, credits_applied: 45, amount_due: 0, status: "paid" });

		const grants = await grantsOf(account.id);
		expect(grants.get(soon.id)).toMatchObject({ remaining: 0, status: "expired" });
		expect(grants.get(later.id)).toMatchObject({ remaining: 0, status: "depleted" });
		expect(grants.get(never.id)).toMatchObject({ remaining: 75, status: "active" });
		expect(await ledgerOf(soon.id)).toEqual([
			["grant", 5000, null],
			["application", -4000, first.id],
			["expiry", -1000, null],
		]);
		expect(await ledgerOf(later.id)).toEqual([
			["grant", 2000, null],
			["application", -2000, second.id],
		]);
		expect(await ledgerOf(never.id)).toEqual([
			["grant", 10000, null],
			["application", -2500, second.id],
		]);

		// Invoice 3, 100.00: what is left, 75.00, pays part; the rest stays due and the invoice open.
		const third = await invoiceOf(account.id, 100);
		expect(third).toMatchObject({ amount: 100, credits_applied: 75, amount_due: 25, status: "open" });
		expect((await grantsOf(account.id)).get(never.id)).toMatchObject({ remaining: 0, status: "depleted" });
		const paid = await post(`/v1/invoices/${third.id}/pay`, { reference: "top-up" });
		expect(paid.body.payments).toEqual([expect.objectContaining({ amount: 25, reference: "top-up" })]);
		const [event] = await outboxEvents("payment.successful", third.id);
		expect(event?.data.amount).toBe(25);
	});

	it("gives credits back when an invoice is voided; a grant that expired meanwhile stays expired", async () => {
		const account = await createAccount();
		const expiring = await grant(account.id, { amount: 10, expires_at: inMs(1500) });
		const lasting = await grant(account.id, { amount: 15 });
		const invoice = await invoiceOf(account.id, 40);
		expect(invoice).toMatchObject({ credits_applied: 25, amount_due: 15, status: "open" });
		await sleep(1600);

		const voided = await post(`/v1/invoices/${invoice.id}/void`);
		expect(voided.body).toMatchObject({ status: "void", credits_applied: 25 });
		const grants = await grantsOf(account.id);
		expect(grants.get(lasting.id)).toMatchObject({ remaining: 15, status: "active" });
		expect(grants.get(expiring.id)).toMatchObject({ remaining: 0, status: "expired" });
		expect(await ledgerOf(lasting.id)).toEqual([
			["grant", 1500, null],
			["application", -1500, invoice.id],
			["reversal", 1500, invoice.id],
		]);
		expect(await ledgerOf(expiring.id)).toEqual([
			["grant", 1000, null],
			["application", -1000, invoice.id],
			["reversal", 1000, invoice.id],
			["expiry", -1000, null],
		]);
		// Voiding again gives nothing back twice.
		await post(`/v1/invoices/${invoice.id}/void`);
		expect((await grantsOf(account.id)).get(lasting.id)?.remaining).toBe(15);
		expect((await get(`/v1/accounts/${account.id}/balance`)).body.available).toBe(15);
	});

	it("uses a zero-decimal currency's whole units", async () => {
		const account = await createAccount(undefined, { currency: "JPY" });
		await grant(account.id, { amount: 1000 });
		const invoice = await invoiceOf(account.id, 1500, "JPY");
		expect(invoice).toMatchObject({ amount: 1500, credits_applied: 1000, amount_due: 500, status: "open" });
	});

	it("never spends the same credit twice when two invoices are stored at once", async () => {
		const account = await createAccount(undefined, { net_terms_days: 7 });
		const only = await grant(account.id, { amount: 50 });
		const scope = { environment: "live" as const };
		const draft = (subscriptionId: string): ComputedInvoice => ({
			subscriptionId,
			accountId: account.id,
			ratePlanId: "plan_race",
			kind: "regular",
			sequence: 1,
			currency: "USD",
			amount: Decimal.from(40),
			lines: [
				{
					metric: "base_fee",
					description: "Base fee",
					quantity: Decimal.ONE,
					amount: Decimal.from(40),
					agentShares: null,
				},
			],
		});
		const store = (id: string) =>
			storeInvoices({
				db: database(env.DB),
				scope,
				window: periodWindow("2026-01"),
				drafts: [draft(id)],
				now: new Date().toISOString(),
			});
		const [[a], [b]] = await Promise.all([store(`sub_race_${only.id}_a`), store(`sub_race_${only.id}_b`)]);
		expect([a?.credits_applied, b?.credits_applied].sort()).toEqual([10, 40]);
		expect((await grantsOf(account.id)).get(only.id)).toMatchObject({ remaining: 0, status: "depleted" });
		const sum = await env.DB.prepare("SELECT SUM(amount_minor) AS s FROM credit_ledger WHERE grant_id = ?1")
			.bind(only.id)
			.first<{ s: number }>();
		expect(sum?.s).toBe(0);
	});

	it("refuses a ledger row that would overdraw a grant", async () => {
		const account = await createAccount();
		const small = await grant(account.id, { amount: 1 });
		await expect(
			env.DB.prepare(
				"INSERT INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, invoice_id, created_at) VALUES ('cle_x', 'live', ?1, ?2, 'application', -101, NULL, '2026-01-01T00:00:00.000Z')",
			)
				.bind(small.id, account.id)
				.run(),
		).rejects.toThrow(/credit_overdrawn/);
		expect(await ledgerOf(small.id)).toEqual([["grant", 100, null]]);
	});
});

describe("POST /v1/accounts/{id}/credit-grants/{grant_id}/void", () => {
	it("voids what is left, once; a depleted grant cannot be voided", async () => {
		const account = await createAccount();
		const partly = await grant(account.id, { amount: 30 });
		await invoiceOf(account.id, 10);
		const voided = await post(`/v1/accounts/${account.id}/credit-grants/${partly.id}/void`);
		expect(voided.status).toBe(200);
		expect(voided.body).toMatchObject({ id: partly.id, amount: 30, remaining: 0, status: "void" });
		expect((await ledgerOf(partly.id)).map(([kind, amount]) => [kind, amount])).toEqual([
			["grant", 3000],
			["application", -1000],
			["void", -2000],
		]);
		expectError(await post(`/v1/accounts/${account.id}/credit-grants/${partly.id}/void`), 409, "conflict");

		const spent = await grant(account.id, { amount: 10 });
		await invoiceOf(account.id, 10);
		expectError(await post(`/v1/accounts/${account.id}/credit-grants/${spent.id}/void`), 409, "conflict");
		expect(await ledgerOf(spent.id)).toHaveLength(2);
	});

	it("answers 404 for an unknown grant or a grant of another account", async () => {
		const account = await createAccount();
		const other = await createAccount();
		const theirs = await grant(other.id, { amount: 5 });
		expectError(await post(`/v1/accounts/${account.id}/credit-grants/cgr_missing/void`), 404, "not_found");
		expectError(await post(`/v1/accounts/${account.id}/credit-grants/${theirs.id}/void`), 404, "not_found");
		expect((await grantsOf(other.id)).get(theirs.id)?.status).toBe("active");
	});
});

describe("GET /v1/accounts/{id}/balance", () => {
	it("adds up active grants and rates the current period's usage as GET /v1/usage does", async () => {
		const account = await createAccount();
		await grant(account.id, { amount: 1000 });
		const voided = await grant(account.id, { amount: 200 });
		await post(`/v1/accounts/${account.id}/credit-grants/${voided.id}/void`);
		const plan = await createPlan({
			base_fee: 25,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.5,
				},
			],
		});
		const instance = instanceKey();
		const subscription = await subscribe(account.id, plan.id, [instance]);
		await sendActions(actions(instance, "call", 7));

		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		// base fee 25.00 + 7 calls × 0.50 = 28.50
		expect(usage.body.total).toBe(28.5);
		const balance = await get(`/v1/accounts/${account.id}/balance`);
		expect(balance.status).toBe(200);
		expect(balance.body).toEqual({
			account_id: account.id,
			currency: "USD",
			available: 1000,
			pending_usage: 28.5,
			projected: 971.5,
		});
	});

	it("counts only what no invoice billed yet: 0 right after the period is invoiced, then the difference", async () => {
		const account = await createAccount();
		await grant(account.id, { amount: 100 });
		const plan = await createPlan({
			base_fee: 25,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.5,
					included_quantity: 5,
				},
			],
		});
		const instance = instanceKey();
		await subscribe(account.id, plan.id, [instance]);
		await sendActions(actions(instance, "call", 7));
		const balance = async () => (await get(`/v1/accounts/${account.id}/balance`)).body;

		// base fee 25.00 + (7 − 5 included) × 0.50 = 26.00
		expect(await balance()).toMatchObject({ available: 100, pending_usage: 26, projected: 74 });

		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice).toMatchObject({ amount: 26, credits_applied: 26, status: "paid" });
		expect(await balance()).toMatchObject({ available: 74, pending_usage: 0, projected: 74 });

		// 3 more calls: the period now rates (10 − 5) × 0.50 = 2.50, of which 1.00 was billed — as a supplementary
		// invoice would bill it, not the 3 calls alone (inside the included 5, they would cost nothing).
		await sendActions(actions(instance, "call", 3));
		expect(await balance()).toMatchObject({ available: 74, pending_usage: 1.5, projected: 72.5 });
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(supplementary).toMatchObject({ kind: "supplementary", amount: 1.5 });
		expect(await balance()).toMatchObject({ available: 72.5, pending_usage: 0, projected: 72.5 });
	});

	it("answers 404 for an unknown account and is readable with a read-only key", async () => {
		expectError(await get("/v1/accounts/acct_missing/balance"), 404, "not_found");
		const account = await createAccount();
		const response = await get(`/v1/accounts/${account.id}/balance`, { key: await createKey("read-only") });
		expect(response.body).toEqual({
			account_id: account.id,
			currency: "USD",
			available: 0,
			pending_usage: 0,
			projected: 0,
		});
		expectError(
			await get(`/v1/accounts/${account.id}/balance`, { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
	});
});
