/**
 * What collection needs of a payment provider (docs/payments.md). Stripe is the one implementation
 * (stripe/stripe-provider.ts); the rest of the service speaks only this interface. Every call that creates or changes
 * something carries an idempotency key, so that repeating the service's own work never asks twice.
 */
import type { Env, Environment } from "../env";
import { stripeSecretKey } from "./config";

export interface CustomerRequest {
	name: string;
	email: string;
	address: Partial<Record<"line1" | "city" | "state" | "postal_code" | "country", string>> | null;
	accountId: string;
}

export interface PaymentRequest {
	invoiceId: string;
	/** Minor units of `currency`. */
	amount: bigint;
	/** Lower case, as Stripe writes it. */
	currency: string;
	customer: string;
	description: string;
}

export interface PaymentProvider {
	createCustomer(request: CustomerRequest, idempotencyKey: string): Promise<{ id: string }>;
	/** Off-session and confirmed at once; answers the PaymentIntent's id even when Stripe declines it (402). */
	createPaymentIntent(
		request: PaymentRequest & { paymentMethod: string },
		idempotencyKey: string,
	): Promise<{ id: string }>;
	confirmPaymentIntent(
		id: string,
		paymentMethod: string | null,
		idempotencyKey: string,
	): Promise<{ id: string }>;
	cancelPaymentIntent(id: string, idempotencyKey: string): Promise<void>;
	createCheckoutSession(
		request: PaymentRequest & { returnUrl: string },
		idempotencyKey: string,
	): Promise<{ id: string; url: string | null }>;
	expireCheckoutSession(id: string, idempotencyKey: string): Promise<void>;
	/** The payment method a setup session saved, when Stripe names one. */
	setupIntentPaymentMethod(setupIntentId: string): Promise<string | null>;
	createRefund(
		request: { paymentIntent: string; amount: bigint; creditNoteId: string },
		idempotencyKey: string,
	): Promise<{ id: string }>;
}

/**
 * The provider refused or did not answer. `message` is the provider's own message (never a key); `declined`
 * answers carry the object they were about (a PaymentIntent declined with 402 still exists).
 */
export class PaymentProviderError extends Error {
	constructor(
		message: string,
		readonly status: number | null,
		readonly paymentIntentId: string | null = null,
	) {
		super(message);
		this.name = "PaymentProviderError";
	}
}

/** The environment's provider, or null when it has no Stripe key (that environment collects nothing). */
export async function paymentProviderFor(
	env: Env,
	environment: Environment,
): Promise<PaymentProvider | null> {
	const key = stripeSecretKey(env, environment);
	if (key === null) return null;
	const { stripeProvider } = await import("./stripe/stripe-provider");
	return stripeProvider(env, key);
}
