/**
 * The PaymentProvider of Stripe, on the official `stripe` package with its fetch client (Workers have no Node
 * http). Loaded with `await import` by payment-provider/provider.ts, so the package costs nothing at cold start. The SDK's
 * own retries are off: a call that fails stays due, and the five-minute cron repeats it with the same
 * Idempotency-Key (payments/collect.ts).
 */
import type Stripe from "stripe";
import type { Env } from "../../env";
import { stripeApiBase } from "../config";
import { type PaymentProvider, PaymentProviderError } from "../provider";

const TIMEOUT_MS = 8_000;
const clients = new Map<string, Promise<Stripe>>();

async function stripeClient(env: Env, key: string): Promise<Stripe> {
	const base = stripeApiBase(env);
	const cacheKey = `${base.href} ${key}`;
	let client = clients.get(cacheKey);
	if (!client) {
		client = import("stripe").then(({ default: StripeClass }) => {
			const protocol = base.protocol === "http:" ? "http" : "https";
			return new StripeClass(key, {
				httpClient: StripeClass.createFetchHttpClient(),
				host: base.hostname,
				port: base.port === "" ? (protocol === "http" ? 80 : 443) : Number(base.port),
				protocol,
				maxNetworkRetries: 0,
				timeout: TIMEOUT_MS,
			});
		});
		clients.set(cacheKey, client);
	}
	return client;
}

/** Stripe's message without anything that looks like a key or a webhook secret (Stripe echoes a masked key). */
export function redactSecrets(message: string): string {
	return message
		.replace(/\b(sk|rk|pk)_(live|test)_[A-Za-z0-9*_]+/g, "[key]")
		.replace(/\bwhsec_\S+/g, "[secret]");
}

function providerError(error: unknown): PaymentProviderError {
	const e = error as {
		message?: string;
		statusCode?: number;
		raw?: { payment_intent?: { id?: string } };
		payment_intent?: { id?: string };
	};
	const paymentIntentId = e.raw?.payment_intent?.id ?? e.payment_intent?.id ?? null;
	const message = redactSecrets(e.message ?? String(error));
	return new PaymentProviderError(message || "Stripe did not answer.", e.statusCode ?? null, paymentIntentId);
}

async function calling<T>(work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		throw providerError(error);
	}
}

export async function stripeProvider(env: Env, key: string): Promise<PaymentProvider> {
	const stripe = await stripeClient(env, key);
	return {
		createCustomer: ({ name, email, address, accountId }, idempotencyKey) =>
			calling(async () => {
				const customer = await stripe.customers.create(
					{ name, email, ...(address ? { address } : {}), metadata: { account_id: accountId } },
					{ idempotencyKey },
				);
				return { id: customer.id };
			}),

		createPaymentIntent: async (request, idempotencyKey) => {
			try {
				const intent = await stripe.paymentIntents.create(
					{
						amount: Number(request.amount),
						currency: request.currency,
						customer: request.customer,
						payment_method: request.paymentMethod,
						confirm: true,
						off_session: true,
						description: request.description,
						metadata: { invoice_id: request.invoiceId },
					},
					{ idempotencyKey },
				);
				return { id: intent.id };
			} catch (error) {
				const refused = providerError(error);
				// Declined (402): the PaymentIntent exists; its failure arrives as payment_intent.payment_failed.
				if (refused.status === 402 && refused.paymentIntentId !== null)
					return { id: refused.paymentIntentId };
				throw refused;
			}
		},

		confirmPaymentIntent: async (id, paymentMethod, idempotencyKey) => {
			try {
				const intent = await stripe.paymentIntents.confirm(
					id,
					{ off_session: true, ...(paymentMethod ? { payment_method: paymentMethod } : {}) },
					{ idempotencyKey },
				);
				return { id: intent.id };
			} catch (error) {
				const refused = providerError(error);
				if (refused.status === 402) return { id: refused.paymentIntentId ?? id };
				throw refused;
			}
		},

		cancelPaymentIntent: (id, idempotencyKey) =>
			calling(async () => {
				await stripe.paymentIntents.cancel(id, {}, { idempotencyKey });
			}),

		createCheckoutSession: (request, idempotencyKey) =>
			calling(async () => {
				const session = await stripe.checkout.sessions.create(
					{
						mode: "payment",
						customer: request.customer,
						line_items: [
							{
								price_data: {
									currency: request.currency,
									unit_amount: Number(request.amount),
									product_data: { name: request.description },
								},
								quantity: 1,
							},
						],
						metadata: { invoice_id: request.invoiceId },
						payment_intent_data: { metadata: { invoice_id: request.invoiceId } },
						success_url: request.returnUrl,
						cancel_url: request.returnUrl,
					},
					{ idempotencyKey },
				);
				return { id: session.id, url: session.url ?? null };
			}),

		expireCheckoutSession: (id, idempotencyKey) =>
			calling(async () => {
				await stripe.checkout.sessions.expire(id, {}, { idempotencyKey });
			}),

		setupIntentPaymentMethod: (setupIntentId) =>
			calling(async () => {
				const intent = await stripe.setupIntents.retrieve(setupIntentId, { expand: ["payment_method"] });
				const method = intent.payment_method;
				if (method === null || method === undefined) return null;
				return typeof method === "string" ? method : method.id;
			}),

		createRefund: ({ paymentIntent, amount, creditNoteId }, idempotencyKey) =>
			calling(async () => {
				const refund = await stripe.refunds.create(
					{
						payment_intent: paymentIntent,
						amount: Number(amount),
						metadata: { credit_note_id: creditNoteId },
					},
					{ idempotencyKey },
				);
				return { id: refund.id };
			}),
	};
}
