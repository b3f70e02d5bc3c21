/** The payments recorded by POST /v1/invoices/{id}/pay (docs/billing.md#invoice-documents-and-payments), listed newest first. */
import { eq } from "drizzle-orm";
import { newestFirst } from "../db/pages";
import type { Listing } from "../db/rows";
import { payments } from "../db/schema";
import { inScope } from "../db/scope";
import { Decimal } from "../lib/decimal";

export interface PaymentView {
	id: string;
	invoice_id: string;
	account_id: string | null;
	amount: number;
	currency: string;
	/** A refund is the negative row a credit note with `refund: true` made (docs/credit-notes.md). */
	kind: "payment" | "refund";
	reference: string | null;
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
