/**
 * The monthly run (docs/billing.md#invoices): at 00:05 UTC on the 1st, the previous month is invoiced for every account of
 * both environments. The cron only fans out — one queue message per account — so no invocation nears D1's
 * limits, and a part that fails is retried alone. A retried message cannot bill twice: it runs the same
 * generation as POST /v1/invoices/generate, which bills only what is not billed yet.
 */
import { and, gt, isNull, lt, or } from "drizzle-orm";
import { periodWindow } from "../billing-period/period";
import { accountsWithSeries, renewRecurringGrants } from "../credits/recurring";
import { database } from "../db/client";
import { subscriptions } from "../db/schema";
import type { ThresholdRequest } from "../durable-objects/usage-accumulator/types";
import type { Env, Environment } from "../env";
import { DomainError } from "../lib/errors";
import { nowIso, previousPeriod } from "../lib/time";
import { dispatchOutbox } from "../webhooks/dispatch";
import { generateInvoicesForPeriod } from "./generate";
import type { InvoiceJob } from "./jobs";
import { issueThresholdInvoice } from "./threshold-invoices";

const ENVIRONMENTS: readonly Environment[] = ["live", "test"];
/** Queues take at most 100 messages per sendBatch. */
const MESSAGES_PER_SEND = 100;

/**
 * Queues one InvoiceJob per account with a subscription active in the previous month (accounts without one would
 * get no invoice anyway), or with a monthly credit series to renew (credits/recurring.ts). Does nothing on any day but the 1st (UTC). Returns the jobs queued.
 */
export async function runMonthlyInvoicing(env: Env, now: Date): Promise<InvoiceJob[]> {
	if (now.getUTCDate() !== 1) return [];
	const billingPeriod = previousPeriod(now);
	const window = periodWindow(billingPeriod);
	const db = database(env.DB);
	const rows = await db
		.selectDistinct({ environment: subscriptions.environment, accountId: subscriptions.accountId })
		.from(subscriptions)
		.where(
			and(
				lt(subscriptions.startedAt, window.end),
				or(isNull(subscriptions.cancelledAt), gt(subscriptions.cancelledAt, window.start)),
			),
		)
		.orderBy(subscriptions.environment, subscriptions.accountId);
	// Accounts with only monthly credits get their next grants too (the job then invoices nothing).
	const seen = new Set(rows.map((row) => `${row.environment}/${row.accountId}`));
	for (const row of await accountsWithSeries(db, billingPeriod)) {
		if (!seen.has(`${row.environment}/${row.accountId}`)) rows.push(row);
	}
	const jobs: InvoiceJob[] = rows
		.filter((row) => ENVIRONMENTS.includes(row.environment as Environment))
		.map((row) => ({ environment: row.environment as Environment, billingPeriod, accountId: row.accountId }));
	for (let i = 0; i < jobs.length; i += MESSAGES_PER_SEND) {
		await env.INVOICE_QUEUE.sendBatch(jobs.slice(i, i + MESSAGES_PER_SEND).map((body) => ({ body })));
	}
	console.log(JSON.stringify({ at: "monthly-invoicing", billingPeriod, jobs: jobs.length }));
	return jobs;
}

/** Consumer of the invoice-generation queue: each message invoices one account; a failure retries only it. */
export async function handleInvoiceBatch(
	batch: MessageBatch<InvoiceJob | ThresholdRequest>,
	env: Env,
): Promise<void> {
	let created = 0;
	for (const message of batch.messages) {
		const job = message.body;
		if (job.kind === "threshold") {
			created += await thresholdJob(env, message as Message<ThresholdRequest>);
			continue;
		}
		const { environment, billingPeriod, accountId } = job;
		try {
			const invoices = await generateInvoicesForPeriod({
				env,
				scope: { environment },
				billingPeriod,
				accountId,
			});
			created += invoices.length;
			// Right after the period is invoiced: the next period's monthly grants, with what this one left.
			await renewRecurringGrants(database(env.DB), { environment }, accountId, billingPeriod, nowIso());
			message.ack();
		} catch (error) {
			// A job that can never succeed (its account is gone, a malformed message) is dropped, not retried.
			if (error instanceof DomainError && error.code !== "internal_error") {
				console.error(JSON.stringify({ at: "invoice-job", job: message.body, dropped: error.message }));
				message.ack();
				continue;
			}
			console.error(JSON.stringify({ at: "invoice-job", job: message.body, error: String(error) }));
			message.retry();
		}
	}
	if (created > 0) await dispatchOutbox(env);
}

/** A threshold invoice the accumulator asked for (threshold-invoices.ts); a failure retries it. */
async function thresholdJob(env: Env, message: Message<ThresholdRequest>): Promise<number> {
	try {
		const invoice = await issueThresholdInvoice(env, message.body);
		message.ack();
		return invoice === null ? 0 : 1;
	} catch (error) {
		console.error(JSON.stringify({ at: "threshold-job", job: message.body, error: String(error) }));
		message.retry();
		return 0;
	}
}
