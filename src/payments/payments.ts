/**
 * Payments (docs/billing.md#invoice-documents-and-payments): recorded by POST /v1/invoices/{id}/pay, and the
 * refunds credit notes make (negative, docs/credit-notes.md); stored here, listed newest first.
 */
import type { z } from "@hono/zod-openapi";
import { newestOfAccountOrInvoice } from "../db/pages";
import type { Listing } from "../db/rows";
import { payments } from "../db/schema";
import { Decimal } from "../lib/decimal";
import type { Payment } from "./schemas";

/** What every payment row names; its amount and kind are the writer's. */
interface PaymentRowBase {
	id: string;
	environment: string;
	invoiceId: string;
	accountId: string;
	currency: string;
	createdAt: string;
	/** "stripe" when the money moved through Stripe. */
	provider: "manual" | "stripe";
}

/** A refund row: negative, made by a credit note (its number becomes the reference). */
export interface RefundRow extends PaymentRowBase {
	/** Negative: what was given back. */
	amount: string;
}

/** SQL for a value the same batch decides, its parameters written `?`. */
export interface SqlValue {
	sql: string;
	params: unknown[];
}

const value = (text: string | null): SqlValue => ({ sql: "?", params: [text] });

/**
 * The INSERT of the payments table that its writers share (test/node/table-owners.test.ts); the manual pay in
 * payments/pay-and-void.ts keeps its own, since invoicing may not import this folder (payments/ imports invoicing/).
 */
function paymentRowInsert(
	d1: D1Database,
	row: PaymentRowBase,
	kind: "payment" | "refund",
	amount: SqlValue,
	reference: SqlValue,
): D1PreparedStatement {
	return d1
		.prepare(
			`INSERT INTO payments (id, environment, invoice_id, account_id, currency, created_at, provider, kind, amount,
				reference)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${amount.sql}, ${reference.sql})`,
		)
		.bind(
			row.id,
			row.environment,
			row.invoiceId,
			row.accountId,
			row.currency,
			row.createdAt,
			row.provider,
			kind,
			...amount.params,
			...reference.params,
		);
}

/**
 * The insert of a refund, for the batch of the credit note that makes it. Its reference is the credit note's
 * number, which that same batch assigns (an SQL expression of it), or Stripe's refund id.
 */
export function refundInsert(d1: D1Database, row: RefundRow, reference: SqlValue): D1PreparedStatement {
	return paymentRowInsert(d1, row, "refund", value(row.amount), reference);
}

/** The insert of a payment, for the batch that pays its invoice (a payment Stripe confirmed). */
export function paymentInsert(
	d1: D1Database,
	row: PaymentRowBase & { amount: string; reference: string | null },
): D1PreparedStatement {
	return paymentRowInsert(d1, row, "payment", value(row.amount), value(row.reference));
}

export type PaymentView = z.infer<typeof Payment>;

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
	const page = { limit, offset };
	const { rows, total } = await newestOfAccountOrInvoice(db, scope, payments, filters, page);
	return { items: rows.map(toView), total };
}
