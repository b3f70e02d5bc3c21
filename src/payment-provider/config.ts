/**
 * Stripe's configuration per environment (docs/payments.md#setup): the live environment collects with
 * STRIPE_SECRET_KEY and hears STRIPE_WEBHOOK_SECRET, the test environment with the TEST_ pair. An empty value is
 * unset. These values are read here only and never stored, logged, audited or shown.
 */
import type { Env, Environment } from "../env";

function set(value: string | undefined): string | null {
	return value === undefined || value.trim() === "" ? null : value;
}

export function stripeSecretKey(env: Env, environment: Environment): string | null {
	return set(environment === "live" ? env.STRIPE_SECRET_KEY : env.STRIPE_TEST_SECRET_KEY);
}

/** The environments whose webhook secret is set, each with its secret. */
export function stripeWebhookSecrets(env: Env): { environment: Environment; secret: string }[] {
	const secrets: { environment: Environment; secret: string }[] = [];
	const live = set(env.STRIPE_WEBHOOK_SECRET);
	const test = set(env.STRIPE_TEST_WEBHOOK_SECRET);
	if (live !== null) secrets.push({ environment: "live", secret: live });
	if (test !== null && test !== live) secrets.push({ environment: "test", secret: test });
	return secrets;
}

export function stripeApiBase(env: Env): URL {
	return new URL(set(env.STRIPE_API_BASE) ?? "https://api.stripe.com");
}

/** Days after the first failed attempt on which a payment is tried again, ascending. */
export function dunningRetryDays(env: Env): number[] {
	const text = set(env.DUNNING_RETRY_DAYS) ?? "1,4,9";
	const days = text
		.split(",")
		.map((part) => Number(part.trim()))
		.filter((day) => Number.isFinite(day) && day > 0);
	return [...new Set(days)].sort((a, b) => a - b);
}

/** Where payment links send the customer back: PUBLIC_BASE_URL, else the origin of the issuing request. */
export function publicBaseUrl(env: Env, origin: string | null): string {
	return (set(env.PUBLIC_BASE_URL) ?? origin ?? "http://localhost:8787").replace(/\/+$/, "");
}
