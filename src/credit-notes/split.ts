/**
 * How a credit note splits (docs/credit-notes.md), planned from the invoice as read: first off what is still
 * unpaid of its amount due, then refunded up to what its payments brought in (with `refund: true`), the rest given
 * back as credit. Pure: issue.ts stores the plan in a batch guarded against the invoice changing meanwhile.
 */
import { fromMinor } from "../credits/wallet";
import { type InvoiceRow, invoiceNumber } from "../invoicing/invoices";
import { Decimal } from "../lib/decimal";
import { conflict, validationError } from "../lib/errors";
import { minorUnits } from "../lib/money";
import type { CreateCreditNoteInput } from "./schemas";

export interface Plan {
	total: Decimal;
	lines: { description: string; amount: string }[];
	toInvoice: Decimal;
	refunded: Decimal;
	credited: Decimal;
	/** What is due after the credit note; 0 makes an open invoice paid. */
	dueAfter: Decimal;
}

function linesOf(input: CreateCreditNoteInput, invoice: InvoiceRow) {
	if (input.lines !== undefined) {
		return input.lines.map((line) => ({ description: line.description, amount: Decimal.from(line.amount) }));
	}
	const amount = Decimal.from(input.amount as number);
	return [{ description: `Credit on invoice ${invoiceNumber(invoice.number)}`, amount }];
}

/**
 * The credit note's split, or the reason it cannot be issued against the invoice as read. `paid` is what its
 * payments brought in, net of earlier refunds: only that much money can be refunded; what prepaid credits covered
 * goes back as credit even when a refund is asked, so that no invoice ever shows a negative amount paid.
 */
export function planCreditNote(input: CreateCreditNoteInput, invoice: InvoiceRow, paid: Decimal): Plan {
	if (invoice.status === "void" || invoice.status === "draft") {
		throw conflict(
			`Invoice ${invoice.id} is ${invoice.status}; only an open or paid invoice can be credited` +
				(invoice.status === "draft" ? " (change a draft's lines, or finalize it first)." : "."),
		);
	}
	const digits = minorUnits(invoice.currency);
	const lines = linesOf(input, invoice);
	for (const [i, line] of lines.entries()) {
		if (line.amount.scale > digits) {
			const path = input.lines === undefined ? "amount" : `lines[${i}].amount`;
			throw validationError(
				path,
				`${invoice.currency} has ${digits} decimal places; credit whole minor units.`,
			);
		}
	}
	const total = Decimal.sum(lines.map((line) => line.amount));
	const amount = Decimal.from(invoice.amount);
	const creditable = amount.sub(fromMinor(BigInt(invoice.creditedMinor), invoice.currency));
	if (total.compare(creditable) > 0) {
		throw conflict(
			`A credit note on invoice ${invoice.id} can take at most ${creditable.toString()} ${invoice.currency} ` +
				`(its amount, ${amount.toString()}, minus earlier credit notes); ${total.toString()} asked. Nothing was stored.`,
		);
	}
	const due = amount.sub(Decimal.from(invoice.creditsApplied)).sub(Decimal.from(invoice.creditedToInvoice));
	// A paid invoice has nothing unpaid: its payment (or its credits) settled the whole amount due.
	const unpaid = invoice.status === "open" ? Decimal.max(Decimal.ZERO, due) : Decimal.ZERO;
	const toInvoice = Decimal.min(total, unpaid);
	const rest = total.sub(toInvoice);
	const refunded = input.refund === true ? Decimal.min(rest, Decimal.max(Decimal.ZERO, paid)) : Decimal.ZERO;
	return {
		total,
		lines: lines.map((line) => ({ description: line.description, amount: line.amount.toString() })),
		toInvoice,
		refunded,
		credited: rest.sub(refunded),
		dueAfter: due.sub(toInvoice),
	};
}
