import { createApp } from "./app";
import { database } from "./db/client";
import type { Env } from "./env";
import { finalizeDueDrafts } from "./invoicing/finalize";
import type { InvoiceJob } from "./invoicing/jobs";
import { handleInvoiceBatch, runMonthlyInvoicing } from "./invoicing/monthly";
import { adoptPendingUsage } from "./subscriptions/adoption";
import { cancelDueSubscriptions } from "./subscriptions/scheduled";
import { handleWebhookBatch } from "./webhooks/consumer";
import type { WebhookMessage } from "./webhooks/messages";
import { resealWebhookSecrets } from "./webhooks/secret-box";
import { sweepWebhooks } from "./webhooks/sweep";

export { RateLimiter } from "./durable-objects/rate-limiter/object";
export { UsageAccumulator } from "./durable-objects/usage-accumulator/object";

const app = createApp();

export default {
	fetch: app.fetch,

	async queue(batch, env) {
		switch (batch.queue) {
			case "webhook-deliveries":
				await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env);
				break;
			case "invoice-generation":
				await handleInvoiceBatch(batch as MessageBatch<InvoiceJob>, env);
				// The monthly run's invoices of Stripe accounts are asked for in the run that issued them.
				await (await import("./payments/collect")).collectWithCron(env, new Date());
				break;
			default:
				console.error(JSON.stringify({ at: "queue", error: `no consumer for queue '${batch.queue}'` }));
				batch.retryAll();
		}
	},

	async scheduled(controller, env) {
		switch (controller.cron) {
			case "*/5 * * * *":
				await sweepWebhooks(env);
				await resealWebhookSecrets(database(env.DB), env);
				await cancelDueSubscriptions(env, new Date(controller.scheduledTime));
				await adoptPendingUsage(env);
				await finalizeDueDrafts(env, new Date(controller.scheduledTime));
				// Stripe (docs/payments.md): what the run above issued, dunning retries, calls that failed before.
				await (await import("./payments/collect")).collectWithCron(env, new Date(controller.scheduledTime));
				break;
			case "5 0 1 * *":
				await cancelDueSubscriptions(env, new Date(controller.scheduledTime));
				await runMonthlyInvoicing(env, new Date(controller.scheduledTime));
				break;
			default:
				console.error(JSON.stringify({ at: "scheduled", error: `no job for cron '${controller.cron}'` }));
		}
	},
} satisfies ExportedHandler<Env>;
