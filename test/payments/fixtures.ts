/** Builders for the Stripe tests: accounts of the test environment that pay through Stripe, and their invoices. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createKey, get, patch } from "../helpers";
import { currentPeriod, customer, generateOne, type Invoice } from "../invoicing/fixtures";
import { eventually } from "./stripe";

let adminKey: Promise<string> | undefined;
/** An admin key of the test environment, the one with a Stripe key in the tests' configuration. */
export function testKey(): Promise<string> {
	adminKey ??= createKey("admin", "test");
	return adminKey;
}

/**
 * An account on Stripe with one open invoice of `baseFee` (USD unless `currency`); `paymentMethod` null: paid
 * through Checkout.
 */
export async function stripeInvoice(
	options: {
		baseFee?: number;
		paymentMethod?: string | null;
		currency?: string;
		block?: boolean;
		/** Runs once the account is on Stripe, before its invoice is issued. */
		beforeIssue?: (account: { id: string; stripe_customer_id: string }) => Promise<void>;
	} = {},
) {
	const key = await testKey();
	const { account, instances } = await customer(
		{ base_fee: options.baseFee ?? 123.45, charges: [], currency: options.currency ?? "USD" },
		{ key },
	);
	const paymentMethod = options.paymentMethod === undefined ? "pm_card_visa" : options.paymentMethod;
	const updated = await patch(
		`/v1/accounts/${account.id}`,
		{
			payment_provider: "stripe",
			...(paymentMethod === null ? {} : { stripe_payment_method_id: paymentMethod }),
			...(options.block ? { block_on_failed_payment: true } : {}),
		},
		{ key },
	);
	expect(updated.status, JSON.stringify(updated.body)).toBe(200);
	await options.beforeIssue?.(updated.body);
	const invoice = await generateOne(currentPeriod(), account.id, key);
	return { key, account: updated.body, invoice, instances };
}

export async function invoiceNow(id: string): Promise<Invoice & { collection: Record<string, any> }> {
	const response = await get(`/v1/invoices/${id}`, { key: await testKey() });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

/** Waits for the request made after the answer: a PaymentIntent or a Checkout Session recorded on the invoice. */
export async function asked(id: string) {
	return eventually(async () => {
		const invoice = await invoiceNow(id);
		expect(invoice.collection.payment_intent_id ?? invoice.collection.checkout_session_id).not.toBeNull();
		return invoice;
	});
}

export async function storedCollection(id: string) {
	return env.DB.prepare(
		"SELECT collection_status, collection_due, collection_round, collection_attempts FROM invoices WHERE id = ?1",
	)
		.bind(id)
		.first<Record<string, unknown>>();
}
