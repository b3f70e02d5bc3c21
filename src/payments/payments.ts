/**
 * Payments (docs/billing.md#invoice-documents-and-payments): recorded by POST /v1/invoices/{id}/pay, and the
 * refunds credit notes make (negative, docs/credit-notes.md); stored here, listed newest first.
 */
import { eq } from "drizzle-orm";
import { newestFirst } from "../db/pages";
import type { Listing } from "../db/rows";
import { payments } from "../db/schema";
import { inScope } from "../db/scope";
import { Decimal } from "../lib/decimal";

/** A refund row: negative, made by a credit note (its number becomes the reference). */
export interface RefundRow {
	id: string;
	environment: string;
	invoiceId: string;
	accountId: string;
	/** Negative: what was given back. */
	amount: string;
	currency: string;
	createdAt: string;
	/** "stripe" when the money went back through Stripe's Refunds API. */
	provider: "manual" | "stripe";
}

/**
 * The insert of a refund, for the batch of the credit note that makes it. Its reference is the credit note's
 * number, which that same batch assigns: `reference` is an SQL expression of it, its parameters written `?`.
 */
export function refundInsert(
	d1: D1Database,
	row: RefundRow,
	reference: { sql: string; params: unknown[] },
): D1PreparedStatement {
	return d1
		.prepare(
			`INSERT INTO payments (id, environment, invoice_id, account_id, amount, currency, created_at, provider, kind,
				reference)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'refund', ${reference.sql})`,
		)
		.bind(
			row.id,
			row.environment,
			row.invoiceId,
			row.accountId,
			row.amount,
			row.currency,
			row.createdAt,
			row.provider,
			...reference.params,
		);
}

export interface PaymentView {
	id: string;
	invoice_id: string;
	account_id: string | null;
	amount: number;
	currency: string;
	/** A refund is the negative row a credit note with `refund: true` made (docs/credit-notes.md). */
	kind: "payment" | "refund";
	reference: string | null;
	/** Who collected it (docs/payments.md): by hand, or through Stripe. */
	provider: "manual" | "stripe";
	paid_at: string;
}

function toView(row: typeof payments.$inferSelect): PaymentView {
	return {
		id: row.id,
		invoice_id: row.invoiceId,
		account_id: row.accountId,
		amount: Decimal.from(row.amount).toNumber(),
		currency: row.currency,
		kind: row.kind,
		reference: row.reference,
		provider: row.provider,
		paid_at: row.createdAt,
	};
}

export async function listPayments({
	db,
	scope,
	filters,
	limit,
	offset,
}: Listing<{ account_id?: string; invoice_id?: string }>): Promise<{ items: PaymentView[]; total: number }> {
	const where = inScope(
		scope,
		payments,
		filters.account_id === undefined ? undefined : eq(payments.accountId, filters.account_id),
		filters.invoice_id === undefined ? undefined : eq(payments.invoiceId, filters.invoice_id),
	);
	const { rows, total } = await newestFirst(db, payments, where, { limit, offset });
	return { items: rows.map(toView), total };
}
