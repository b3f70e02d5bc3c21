/**
 * The Worker's bindings. This file imports nothing of the app, so any file may import it without closing a
 * circle: the Durable Object classes and the queues' message types are named by their owners, each of which adds
 * its entry to BoundClasses or QueueMessages below (declaration merging: `declare module "…/env"` beside the
 * class or the message type).
 */

/** By binding name, the Durable Object class behind it (durable-objects/<name>/object.ts adds each). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the objects' modules.
export interface BoundClasses {}

/** By binding name, the message type of a queue (invoicing/jobs.ts, webhooks/messages.ts add theirs). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the messages' modules.
export interface QueueMessages {}

export interface Env {
	DB: D1Database;
	RATE_LIMITER: DurableObjectNamespace<BoundClasses["RATE_LIMITER"]>;
	USAGE_ACCUMULATOR: DurableObjectNamespace<BoundClasses["USAGE_ACCUMULATOR"]>;
	WEBHOOK_QUEUE: Queue<QueueMessages["WEBHOOK_QUEUE"]>;
	INVOICE_QUEUE: Queue<QueueMessages["INVOICE_QUEUE"]>;
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
	/** "true" only in local development and the tests: webhooks may go to localhost, 127.0.0.1 and [::1]. */
	ALLOW_LOCAL_WEBHOOK_URLS?: string;
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
