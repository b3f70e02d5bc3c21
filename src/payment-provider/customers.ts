/**
 * An account that pays through Stripe has a Stripe customer (docs/payments.md#accounts): made from the account's
 * name, email and billing address when it has none, keyed by the account's id so that a repeated request never
 * makes two. No key for the environment: 409 and no call; Stripe's refusal: 502 — and nothing is stored either way.
 */
import type { Env, Environment } from "../env";
import { conflict, paymentProviderError } from "../lib/errors";
import { type CustomerRequest, PaymentProviderError, paymentProviderFor } from "./provider";

export interface CustomerSource {
	id: string;
	name: string;
	email: string;
	billingAddress: Partial<Record<"street" | "city" | "state" | "zip" | "country", string>> | null;
}

export function noStripeKey(environment: Environment): Error {
	return conflict(
		`The ${environment} environment has no Stripe key, so its accounts cannot pay through Stripe (docs/payments.md).`,
	);
}

function customerRequest(account: CustomerSource): CustomerRequest {
	const a = account.billingAddress;
	const address =
		a === null
			? null
			: Object.fromEntries(
					Object.entries({
						line1: a.street,
						city: a.city,
						state: a.state,
						postal_code: a.zip,
						country: a.country,
					}).filter(([, value]) => value !== undefined),
				);
	return { name: account.name, email: account.email, address, accountId: account.id };
}

/** Creates the account's Stripe customer and answers its id. */
export async function createStripeCustomer(
	env: Env,
	environment: Environment,
	account: CustomerSource,
): Promise<string> {
	const provider = await paymentProviderFor(env, environment);
	if (provider === null) throw noStripeKey(environment);
	try {
		const customer = await provider.createCustomer(customerRequest(account), `${account.id}:customer`);
		return customer.id;
	} catch (error) {
		if (error instanceof PaymentProviderError) throw paymentProviderError(error.message);
		throw error;
	}
}
