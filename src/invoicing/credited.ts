/**
 * What a credit note changes on its invoice (docs/credit-notes.md): what credit notes took (credited_minor), the
 * part of it off the amount due, and `paid` when nothing is left due. For the credit note's batch, guarded: the
 * update holds only if the invoice is as it was read (status, and what credit notes had taken), else the guard
 * rolls the whole batch back and the caller plans again.
 */
import { abortUnlessChanged, statement } from "../db/batch";
import type { InvoiceRow } from "./invoices";

export interface InvoiceCredit {
	/** What credit notes took in all after this one, in minor units. */
	creditedMinor: bigint;
	/** What credit notes took off the amount due in all after this one. */
	creditedToInvoice: string;
	becomesPaid: boolean;
	now: string;
}

export function creditInvoiceGuarded(
	d1: D1Database,
	invoice: InvoiceRow,
	credit: InvoiceCredit,
): D1PreparedStatement[] {
	return [
		statement(
			d1,
			`UPDATE invoices SET credited_minor = ?3, credited_to_invoice = ?4,
				status = CASE WHEN ?5 THEN 'paid' ELSE status END, paid_at = CASE WHEN ?5 THEN ?6 ELSE paid_at END
			WHERE environment = ?1 AND id = ?2 AND status = ?7 AND credited_minor = ?8`,
			invoice.environment,
			invoice.id,
			credit.creditedMinor.toString(),
			credit.creditedToInvoice,
			credit.becomesPaid ? 1 : 0,
			credit.now,
			invoice.status,
			invoice.creditedMinor,
		),
		abortUnlessChanged(d1),
	];
}
