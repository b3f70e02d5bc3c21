import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { InvoiceJob } from "../../src/invoicing/jobs";
import { handleInvoiceBatch, runMonthlyInvoicing } from "../../src/invoicing/monthly";
import { createAccount, get, post } from "../helpers";
import { currentPeriod, shiftPeriod } from "../invoicing/fixtures";

afterEach(() => {
	vi.restoreAllMocks();
});

/** The monthly run on the 1st of next month, its queue messages captured and then consumed. */
async function monthlyRun(): Promise<InvoiceJob[]> {
	const jobs: InvoiceJob[] = [];
	vi.spyOn(env.INVOICE_QUEUE, "sendBatch").mockImplementation(async (messages) => {
		jobs.push(...[...messages].map((message) => message.body as InvoiceJob));
		return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
	});
	await runMonthlyInvoicing(env, new Date(`${shiftPeriod(currentPeriod(), 1)}-01T00:05:00.000Z`));
	const batch = createMessageBatch<InvoiceJob>(
		"invoice-generation",
		jobs.map((body, i) => ({ id: `job-${i}`, timestamp: new Date(), attempts: 1, body })),
	);
	await handleInvoiceBatch(batch, env);
	return jobs;
}

describe("the monthly run and recurring credits", () => {
	it("renews the monthly grant of an account with no subscription, once however often it runs", async () => {
		const account = await createAccount();
		const created = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 25,
			recurrence: "monthly",
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		const jobs = await monthlyRun();
		expect(jobs).toContainEqual({
			environment: "live",
			billingPeriod: currentPeriod(),
			accountId: account.id,
		});
		await monthlyRun();
		const grants = (await get(`/v1/accounts/${account.id}/credit-grants`)).body.credit_grants;
		expect(grants).toHaveLength(2);
		expect(grants[0]).toMatchObject({
			amount: 25,
			remaining: 25,
			recurrence: "monthly",
			expires_at: `${shiftPeriod(currentPeriod(), 2)}-01T00:00:00.000Z`,
		});
		expect((await get(`/v1/invoices?account_id=${account.id}`)).body.invoices).toEqual([]);
	});

	it("does not queue an account whose series was stopped", async () => {
		const account = await createAccount();
		const created = await post(`/v1/accounts/${account.id}/credit-grants`, {
			amount: 5,
			recurrence: "monthly",
		});
		expect((await post(`/v1/accounts/${account.id}/credit-grants/${created.body.id}/void`)).status).toBe(200);
		const jobs = await monthlyRun();
		expect(jobs.map((job) => job.accountId)).not.toContain(account.id);
	});
});
