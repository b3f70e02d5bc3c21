/**
 * The Worker: fetch, queues and crons. A new isolate starts with the ingest app alone (ingest-app.ts); the whole
 * app, the queue consumers and the cron jobs are imported when first needed (docs/scaling.md#cold-start).
 */
import type { Env } from "./env";
import type { Router } from "./http/context";
import { createIngestApp } from "./ingest-app";
import type { InvoiceJob } from "./invoicing/jobs";
import type { WebhookMessage } from "./webhooks/messages";

export { RateLimiter } from "./durable-objects/rate-limiter/object";
export { UsageAccumulator } from "./durable-objects/usage-accumulator/object";

const ingest = createIngestApp();
let whole: Router | undefined;

/**
 * The whole app, imported and built on the first request that needs it. Each request awaits its own import (the
 * module loads once): a promise begun by one request and awaited by another crosses their I/O contexts.
 */
async function wholeApp(): Promise<Router> {
	if (whole !== undefined) return whole;
	const { createApp } = await import("./app");
	whole ??= createApp();
	return whole;
}

export default {
	async fetch(request, env, ctx) {
		if (ingest.answers(request)) return ingest.app.fetch(request, env, ctx);
		return (await wholeApp()).fetch(request, env, ctx);
	},

	async queue(batch, env) {
		switch (batch.queue) {
			case "webhook-deliveries": {
				const { handleWebhookBatch } = await import("./webhooks/consumer");
				await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env);
				break;
			}
			case "invoice-generation": {
				const { handleInvoiceBatch } = await import("./invoicing/monthly");
				await handleInvoiceBatch(batch as MessageBatch<InvoiceJob>, env);
				// The monthly run's invoices of Stripe accounts are asked for in the run that issued them.
				await (await import("./payments/collect")).collectWithCron(env, new Date());
				break;
			}
			default:
				console.error(JSON.stringify({ at: "queue", error: `no consumer for queue '${batch.queue}'` }));
				batch.retryAll();
		}
	},

	async scheduled(controller, env) {
		const at = new Date(controller.scheduledTime);
		switch (controller.cron) {
			case "*/5 * * * *": {
				const [
					{ sweepWebhooks },
					{ resealWebhookSecrets },
					{ database },
					{ cancelDueSubscriptions },
					{ adoptPendingUsage },
					{ finalizeDueDrafts },
				] = await Promise.all([
					import("./webhooks/sweep"),
					import("./webhooks/secret-box"),
					import("./db/client"),
					import("./subscriptions/scheduled"),
					import("./subscriptions/adoption"),
					import("./invoicing/finalize"),
				]);
				await sweepWebhooks(env);
				await resealWebhookSecrets(database(env.DB), env);
				await cancelDueSubscriptions(env, at);
				await adoptPendingUsage(env);
				await finalizeDueDrafts(env, at);
				// Invoices of past periods that waited for an exchange rate (docs/currencies.md).
				await (await import("./invoicing/conversion-waits")).issueWaitingInvoices(env, at);
				// Stripe (docs/payments.md): what the run above issued, dunning retries, calls that failed before.
				await (await import("./payments/collect")).collectWithCron(env, at);
				break;
			}
			case "5 0 1 * *": {
				const [{ cancelDueSubscriptions }, { runMonthlyInvoicing }] = await Promise.all([
					import("./subscriptions/scheduled"),
					import("./invoicing/monthly"),
				]);
				await cancelDueSubscriptions(env, at);
				await runMonthlyInvoicing(env, at);
				break;
			}
			default:
				console.error(JSON.stringify({ at: "scheduled", error: `no job for cron '${controller.cron}'` }));
		}
	},
} satisfies ExportedHandler<Env>;
