import {
	createExecutionContext,
	createMessageBatch,
	createScheduledController,
	getQueueResult,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import type { InvoiceJob } from "../../src/invoicing/jobs";
import { runMonthlyInvoicing } from "../../src/invoicing/monthly";
import { createKey } from "../helpers";
import { actions, currentPeriod, customer, invoicesOf, sendActions, shiftPeriod } from "./fixtures";

// The monthly run: the cron on the 1st fans out one queue message per account, and the queue consumer invokes
// the same generation as the endpoint. Queue sends are captured (the local queue would deliver on real timers);
// the captured messages are then handed to the Worker's queue handler as the queue would.
const worker: ExportedHandler<Env> = entry;

const plan = {
	base_fee: 1,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};

afterEach(() => {
	vi.restoreAllMocks();
});

function captureInvoiceJobs() {
	const sends: InvoiceJob[][] = [];
	vi.spyOn(env.INVOICE_QUEUE, "sendBatch").mockImplementation(async (messages) => {
		sends.push([...messages].map((message) => message.body as InvoiceJob));
		return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
	});
	return sends;
}

async function consume(jobs: InvoiceJob[]) {
	const batch = createMessageBatch<InvoiceJob>(
		"invoice-generation",
		jobs.map((body, i) => ({ id: `job-${i}`, timestamp: new Date(), attempts: 1, body })),
	);
	const ctx = createExecutionContext();
	await worker.queue?.(batch as MessageBatch, env, ctx);
	return getQueueResult(batch, ctx);
}

/** 00:05 UTC on the 1st of next month: the run that invoices the current month. */
const firstOfNextMonth = () => Date.parse(`${shiftPeriod(currentPeriod(), 1)}-01T00:05:00.000Z`);

describe("monthly invoicing", () => {
	it("invoices the previous month of every account of both environments, through the queue", async () => {
		const sends = captureInvoiceJobs();
		const testKey = await createKey("read-write", "test");
		const live = await customer(plan);
		const test = await customer(plan, { key: testKey });
		await sendActions(actions(live.instances[0] as string, "call", 2), "live");
		await sendActions(actions(test.instances[0] as string, "call", 3), "test");

		const controller = createScheduledController({ cron: "5 0 1 * *", scheduledTime: firstOfNextMonth() });
		await worker.scheduled?.(controller, env, createExecutionContext());

		const jobs = sends.flat();
		expect(jobs).toEqual(
			expect.arrayContaining([
				{ environment: "live", billingPeriod: currentPeriod(), accountId: live.account.id },
				{ environment: "test", billingPeriod: currentPeriod(), accountId: test.account.id },
			]),
		);
		expect(jobs).toHaveLength(2);

		const result = await consume(jobs);
		expect(result.explicitAcks.sort()).toEqual(["job-0", "job-1"]);
		expect(result.retryMessages).toEqual([]);
		// live: base fee 1 + 2 calls × 1 = 3; test: 1 + 3 × 1 = 4
		expect((await invoicesOf(live.account.id)).map((invoice) => invoice.amount)).toEqual([3]);
		expect((await invoicesOf(test.account.id, testKey)).map((invoice) => invoice.amount)).toEqual([4]);

		// A message delivered twice (at-least-once queues) bills nothing twice.
		await consume(jobs);
		expect(await invoicesOf(live.account.id)).toHaveLength(1);
		expect(await invoicesOf(test.account.id, testKey)).toHaveLength(1);
	});

	it("retries only the job that failed, and the retry bills it once", async () => {
		const failing = await customer(plan);
		const healthy = await customer(plan);
		const jobs: InvoiceJob[] = [failing, healthy].map((c) => ({
			environment: "live",
			billingPeriod: currentPeriod(),
			accountId: c.account.id,
		}));
		// The failing account's usage accumulator is unreachable for one attempt.
		const idFromName = env.USAGE_ACCUMULATOR.idFromName.bind(env.USAGE_ACCUMULATOR);
		const outage = vi.spyOn(env.USAGE_ACCUMULATOR, "idFromName").mockImplementation((name) => {
			if (name.endsWith(failing.subscription.id)) throw new Error("accumulator unavailable");
			return idFromName(name);
		});

		const first = await consume(jobs);
		expect(first.retryMessages.map((message) => message.msgId)).toEqual(["job-0"]);
		expect(first.explicitAcks).toEqual(["job-1"]);
		expect(await invoicesOf(failing.account.id)).toEqual([]);
		expect(await invoicesOf(healthy.account.id)).toHaveLength(1);

		outage.mockRestore();
		const retried = await consume([jobs[0] as InvoiceJob]);
		expect(retried.explicitAcks).toEqual(["job-0"]);
		expect(await invoicesOf(failing.account.id)).toHaveLength(1);
		expect(await invoicesOf(healthy.account.id)).toHaveLength(1);
	});

	it("drops a job that can never succeed instead of retrying it forever", async () => {
		const result = await consume([
			{ environment: "live", billingPeriod: currentPeriod(), accountId: "acct_gone" },
		]);
		expect(result.explicitAcks).toEqual(["job-0"]);
		expect(result.retryMessages).toEqual([]);
	});

	it("does nothing on any other day than the 1st", async () => {
		const sends = captureInvoiceJobs();
		await customer(plan);
		const secondOfNextMonth = new Date(firstOfNextMonth() + 24 * 60 * 60 * 1000);
		expect(await runMonthlyInvoicing(env, secondOfNextMonth)).toEqual([]);
		expect(sends).toEqual([]);
	});

	it("sends at most 100 messages per batch", async () => {
		const sends = captureInvoiceJobs();
		const rows = Array.from({ length: 230 }, (_, i) => i);
		// Subscriptions seeded directly: 230 accounts through the API would only make the test slow.
		const started = `${currentPeriod()}-01T00:00:00.000Z`;
		for (let i = 0; i < rows.length; i += 50) {
			await env.DB.batch(
				rows
					.slice(i, i + 50)
					.map((n) =>
						env.DB.prepare(
							"INSERT INTO subscriptions (id, environment, account_id, rate_plan_id, status, started_at, created_at, updated_at) VALUES (?1, 'test', ?2, 'plan_x', 'active', ?3, ?3, ?3)",
						).bind(`sub_bulk_${n}`, `acct_bulk_${String(n).padStart(3, "0")}`, started),
					),
			);
		}
		const jobs = await runMonthlyInvoicing(env, new Date(firstOfNextMonth()));
		expect(jobs.filter((job) => job.accountId.startsWith("acct_bulk_"))).toHaveLength(230);
		expect(sends.map((batch) => batch.length).every((size) => size <= 100)).toBe(true);
		expect(sends.flat()).toEqual(jobs);
	});
});
