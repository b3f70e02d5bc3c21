/**
 * A credit note's refund of an invoice paid through Stripe goes through Stripe's Refunds API
 * (docs/payments.md#payments-and-refunds), before the credit note is stored: Stripe's refusal stores nothing.
 * The Idempotency-Key comes from the credit note's id, so a retried request never refunds twice.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { payments } from "../db/schema";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import type { Decimal } from "../lib/decimal";
import { paymentProviderError } from "../lib/errors";
import { minorUnits } from "../lib/money";
import { PaymentProviderError, paymentProviderFor } from "./provider";

/** Minor units, cut toward zero past the currency's decimals (a refund never gives back more than asked). */
function inMinorUnits(amount: Decimal, currency: string): bigint {
	const digits = minorUnits(currency);
	if (amount.scale <= digits) return amount.units * 10n ** BigInt(digits - amount.scale);
	return amount.units / 10n ** BigInt(amount.scale - digits);
}

/**
 * Refunds `amount` of the invoice's Stripe payment and answers Stripe's refund id (re_…); null when the invoice
 * was not paid through Stripe (the refund is then recorded by hand, as before).
 */
export async function refundThroughStripe(
	env: Env,
	db: Db,
	scope: Scope,
	refund: { invoiceId: string; amount: Decimal; currency: string; creditNoteId: string },
): Promise<string | null> {
	const [paid] = await db
		.select({ reference: payments.reference })
		.from(payments)
		.where(
			and(
				eq(payments.environment, scope.environment),
				eq(payments.invoiceId, refund.invoiceId),
				eq(payments.kind, "payment"),
				eq(payments.provider, "stripe"),
			),
		);
	if (!paid?.reference) return null;
	const provider = await paymentProviderFor(env, scope.environment);
	if (provider === null) return null;
	try {
		const made = await provider.createRefund(
			{
				paymentIntent: paid.reference,
				amount: inMinorUnits(refund.amount, refund.currency),
				creditNoteId: refund.creditNoteId,
			},
			`${refund.creditNoteId}:refund`,
		);
		return made.id;
	} catch (error) {
		if (error instanceof PaymentProviderError) throw paymentProviderError(error.message);
		throw error;
	}
}
