import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { InvoiceJob } from "../../src/invoicing/jobs";
import { handleInvoiceBatch } from "../../src/invoicing/monthly";
import { createAccount, expectError, get, post } from "../helpers";
import { actions, currentPeriod, customer, sendActions, shiftPeriod } from "../invoicing/fixtures";

/** The monthly run's job of one account for the current period (as on the 1st for the previous one). */
async function monthlyRun(accountId: string) {
	const batch = createMessageBatch<InvoiceJob>("invoice-generation", [
		{
			id: `job-${crypto.randomUUID()}`,
			timestamp: new Date(),
			attempts: 1,
			body: { environment: "live", billingPeriod: currentPeriod(), accountId },
		},
	]);
	await handleInvoiceBatch(batch, env);
}

const grantsOf = async (accountId: string) =>
	(await get(`/v1/accounts/${accountId}/credit-grants?limit=100`)).body.credit_grants as {
		id: string;
		amount: number;
		remaining: number;
		expires_at: string | null;
		recurrence: string | null;
		rollover_max: number | null;
		status: string;
	}[];

describe("monthly credit grants", () => {
	it("grants $1,000 + the $400 left of $1,000 after $600 used: $1,400, once however often the run goes", async () => {
		// $1 a call, no base fee: 600 calls are $600.
		const { account, instances } = await customer({
			base_fee: 0,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 1,
				},
			],
		});
		const created = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 1000,
			recurrence: "monthly",
			rollover_max: 2000,
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		const next = shiftPeriod(currentPeriod(), 1);
		expect(created.body).toMatchObject({
			amount: 1000,
			remaining: 1000,
			recurrence: "monthly",
			rollover_max: 2000,
			expires_at: `${next}-01T00:00:00.000Z`,
		});
		await sendActions(actions(instances[0] as string, "call", 600));
		await monthlyRun(account.id);
		await monthlyRun(account.id);
		const grants = await grantsOf(account.id);
		expect(grants).toHaveLength(2);
		const [february, january] = grants;
		expect(january).toMatchObject({ id: created.body.id, remaining: 0 });
		expect(february).toMatchObject({
			amount: 1400,
			remaining: 1400,
			recurrence: "monthly",
			expires_at: `${shiftPeriod(currentPeriod(), 2)}-01T00:00:00.000Z`,
		});
		const invoices = (await get(`/v1/invoices?account_id=${account.id}`)).body.invoices;
		expect(invoices).toHaveLength(1);
		expect(invoices[0]).toMatchObject({ amount: 600, credits_applied: 600, amount_due: 0 });
	});

	it("rolls over at most rollover_max, and nothing without one", async () => {
		const account = await createAccount();
		const capped = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 100,
			recurrence: "monthly",
			rollover_max: 30,
		});
		const plain = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 50,
			recurrence: "monthly",
		});
		expect([capped.status, plain.status]).toEqual([201, 201]);
		await monthlyRun(account.id);
		const amounts = (await grantsOf(account.id)).map((grant) => grant.amount).sort((a, b) => a - b);
		expect(amounts).toEqual([50, 50, 100, 130]);
	});

	it("a void of a depleted monthly grant is allowed and stops the recurrence", async () => {
		const account = await createAccount();
		const grant = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 20,
			recurrence: "monthly",
		});
		await env.DB.prepare(
			"INSERT INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, invoice_id, created_at) VALUES (?1, 'live', ?2, ?3, 'application', -2000, NULL, ?4)",
		)
			.bind(`cle_test_${crypto.randomUUID()}`, grant.body.id, account.id, new Date().toISOString())
			.run();
		expect((await grantsOf(account.id))[0]?.status).toBe("depleted");
		const voided = await post(`/v1/accounts/${account.id}/credit-grants/${grant.body.id}/void`);
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(voided.body.status).toBe("void");
		await monthlyRun(account.id);
		expect(await grantsOf(account.id)).toHaveLength(1);
		// A void grant cannot be voided again.
		const again = await post(`/v1/accounts/${account.id}/credit-grants/${grant.body.id}/void`);
		expectError(again, 409, "conflict");
	});

	it.each([
		[{ amount: 10, rollover_max: 5 }, "rollover_max"],
		[{ amount: 10, recurrence: "monthly", expires_at: "2030-01-01T00:00:00Z" }, "expires_at"],
		[{ amount: 10, recurrence: "monthly", rollover_max: -1 }, "rollover_max"],
		[{ amount: 10, recurrence: "weekly" }, "recurrence"],
	])("refuses %j with 400 naming %s, nothing stored", async (body, path) => {
		const account = await createAccount();
		const response = await post(`/v1/accounts/${account.id}/credit-grants`, body);
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((detail: { path: string }) => detail.path)).toContain(path);
		expect(await grantsOf(account.id)).toEqual([]);
	});
});
