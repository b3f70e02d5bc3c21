import type { RateLimiter } from "./durable-objects/rate-limiter/object";
import type { UsageAccumulator } from "./durable-objects/usage-accumulator/object";
import type { InvoiceJob } from "./invoicing/jobs";
import type { WebhookMessage } from "./webhooks/messages";

export interface Env {
	DB: D1Database;
	RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
	USAGE_ACCUMULATOR: DurableObjectNamespace<UsageAccumulator>;
	WEBHOOK_QUEUE: Queue<WebhookMessage>;
	INVOICE_QUEUE: Queue<InvoiceJob>;
	/** The raw-event archive (docs/metering.md#where-events-live): gzip NDJSON per accumulator flush. */
	EVENTS_ARCHIVE: R2Bucket;
	ADMIN_API_KEY?: string;
	/** Base64 of 32 random bytes: encrypts webhook signing secrets at rest (webhooks/secret-box.ts). */
	WEBHOOK_SECRETS_KEY?: string;
	RATE_LIMIT_SDK_PER_MINUTE?: string;
	RATE_LIMIT_API_PER_MINUTE?: string;
	/** "1" only under the bench: enables `GET /healthz/hop` (http/bench-routes.ts). */
	BENCH_ROUTES?: string;
	/** The seller on invoice documents (docs/billing.md#invoice-documents-and-payments); "Agent Metering & Billing" when unset. */
	BILLING_COMPANY_NAME?: string;
	/** Stripe collection (docs/payments.md): keys and webhook secrets per environment; empty counts as unset. */
	STRIPE_SECRET_KEY?: string;
	STRIPE_TEST_SECRET_KEY?: string;
	STRIPE_WEBHOOK_SECRET?: string;
	STRIPE_TEST_WEBHOOK_SECRET?: string;
	/** Where Stripe's API is called; https://api.stripe.com when unset (tests: stripe-mock). */
	STRIPE_API_BASE?: string;
	/** The service's public origin, for payment links; the issuing request's origin when unset. */
	PUBLIC_BASE_URL?: string;
	/** Days after the first failed payment on which it is tried again; "1,4,9" when unset. */
	DUNNING_RETRY_DAYS?: string;
}

export type Environment = "live" | "test";
