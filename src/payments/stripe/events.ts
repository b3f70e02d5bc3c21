/**
 * Applies one verified Stripe event in its environment (docs/payments.md#stripes-webhooks). Each event id is
 * applied once: its id is stored in the batch that applies it, and a redelivery finds it and changes nothing.
 * Unknown types, and events naming no invoice (or, for setup sessions, no account) of this environment, are
 * acknowledged and ignored.
 */
import { and, eq } from "drizzle-orm";
import { fromDrizzle } from "../../db/batch";
import { database } from "../../db/client";
import { accounts, stripeEvents } from "../../db/schema";
import { inScope, type Scope } from "../../db/scope";
import type { Env, Environment } from "../../env";
import { dunningRetryDays } from "../../payment-provider/config";
import { PaymentProviderError, paymentProviderFor } from "../../payment-provider/provider";
import { applyFailedPayment } from "./failure-events";
import { applySucceededPayment, eventApplied, type StripeEventRef } from "./payment-events";

interface StripeObject {
	id?: string;
	object?: string;
	metadata?: Record<string, string> | null;
	amount?: number;
	amount_received?: number;
	amount_total?: number | null;
	mode?: string;
	payment_status?: string;
	payment_intent?: string | { id: string } | null;
	payment_method?: string | { id: string } | null;
	setup_intent?: string | { id: string } | null;
	last_payment_error?: { message?: string } | null;
}

export interface StripeEvent {
	id: string;
	type: string;
	data: { object: StripeObject };
}

const idOf = (value: string | { id: string } | null | undefined): string | null =>
	value === null || value === undefined ? null : typeof value === "string" ? value : value.id;

const minor = (value: number | null | undefined): bigint | null =>
	typeof value === "number" && Number.isInteger(value) ? BigInt(value) : null;

export async function applyStripeEvent(
	env: Env,
	environment: Environment,
	event: StripeEvent,
): Promise<void> {
	const db = database(env.DB);
	const scope: Scope = { environment };
	const ref: StripeEventRef = { id: event.id, type: event.type };
	const [seen] = await db
		.select({ id: stripeEvents.id })
		.from(stripeEvents)
		.where(and(eq(stripeEvents.environment, environment), eq(stripeEvents.id, event.id)));
	if (seen) return;
	const object = event.data.object;
	const invoiceId = object.metadata?.invoice_id;
	switch (event.type) {
		case "payment_intent.succeeded": {
			const amount = minor(object.amount_received);
			if (!invoiceId || !object.id || amount === null) return;
			return applySucceededPayment(db, scope, ref, {
				invoiceId,
				paymentIntentId: object.id,
				amountMinor: amount,
			});
		}
		case "payment_intent.payment_failed": {
			if (!invoiceId || !object.id) return;
			return applyFailedPayment(
				db,
				scope,
				ref,
				{
					invoiceId,
					paymentIntentId: object.id,
					amountMinor: minor(object.amount),
					error: object.last_payment_error?.message ?? "The payment failed.",
				},
				dunningRetryDays(env),
			);
		}
		case "checkout.session.completed": {
			if (object.mode === "setup") return saveSetupPaymentMethod(env, scope, ref, object);
			const paymentIntentId = idOf(object.payment_intent);
			const amount = minor(object.amount_total);
			if (object.mode !== "payment" || object.payment_status !== "paid") return;
			if (!invoiceId || paymentIntentId === null || amount === null) return;
			return applySucceededPayment(db, scope, ref, { invoiceId, paymentIntentId, amountMinor: amount });
		}
	}
}

/** A setup session completed: the account's payment method becomes the one it saved, when Stripe names one. */
async function saveSetupPaymentMethod(env: Env, scope: Scope, ref: StripeEventRef, session: StripeObject) {
	const accountId = session.metadata?.account_id;
	if (!accountId) return;
	const db = database(env.DB);
	const [account] = await db
		.select({ id: accounts.id })
		.from(accounts)
		.where(inScope(scope, accounts, eq(accounts.id, accountId)));
	if (!account) return;
	let paymentMethod = idOf(session.payment_method);
	const setupIntent = idOf(session.setup_intent);
	if (paymentMethod === null && setupIntent !== null) {
		const provider = await paymentProviderFor(env, scope.environment);
		try {
			paymentMethod = provider === null ? null : await provider.setupIntentPaymentMethod(setupIntent);
		} catch (error) {
			// Stripe did not answer: not applied, so Stripe's redelivery tries again.
			if (error instanceof PaymentProviderError) throw new Error(`Stripe: ${error.message}`);
			throw error;
		}
	}
	const d1 = db.$client;
	const statements = [fromDrizzle(d1, eventApplied(db, scope, ref))];
	if (paymentMethod !== null) {
		statements.unshift(
			fromDrizzle(
				d1,
				db
					.update(accounts)
					.set({ stripePaymentMethodId: paymentMethod })
					.where(inScope(scope, accounts, eq(accounts.id, accountId))),
			),
		);
	}
	await d1.batch(statements);
}
