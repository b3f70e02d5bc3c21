/**
 * Issuing a credit note (docs/credit-notes.md): planned from a read of the invoice and its payments (split.ts),
 * then stored by one D1 batch in which each table is written by its owner's helper — the invoice's guarded update,
 * the note and its number, the refund, the credit grant, the outbox, the audit record, and the Idempotency-Key's
 * mark (db/write-once.ts), so that a repeat of the request finds the note instead of issuing a second one.
 *
 * D1 has no interactive transactions: the batch's first statement updates the invoice only if nothing changed
 * since the read (status, and what credit notes had taken), and its guard rolls the whole batch back otherwise.
 * The loser of a race reads again and plans again, so concurrent credit notes can never together take more than
 * the invoice's amount; a request still losing after many rounds answers 409 (try again).
 */
import { eq } from "drizzle-orm";
import { auditInsert, created } from "../audit/record";
import { grantInsert } from "../credits/grants";
import { toMinor } from "../credits/wallet";
import { isAbortedByGuard } from "../db/batch";
import type { ById } from "../db/rows";
import { invoices, payments } from "../db/schema";
import { inScope } from "../db/scope";
import { idOnce, markStatements, type WriteMark } from "../db/write-once";
import type { Env, Environment } from "../env";
import { creditInvoiceGuarded } from "../invoicing/credited";
import { type InvoiceRow, invoiceEventData } from "../invoicing/invoices";
import { Decimal } from "../lib/decimal";
import { contention, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { refundThroughStripe } from "../payment-provider/refunds";
import { refundInsert } from "../payments/payments";
import { outboxInsertMany } from "../webhooks/outbox";
import {
	type CreditNoteView,
	creditNoteInsert,
	creditNoteNumberSql,
	getCreditNote,
	type NewCreditNote,
} from "./credit-notes";
import type { CreateCreditNoteInput } from "./schemas";
import { type Plan, planCreditNote } from "./split";

/** Each lost race means another credit note was stored; this many rounds cover any realistic contention. */
const RACE_ATTEMPTS = 100;

export async function issueCreditNote({
	db,
	scope,
	id,
	input,
	mark,
	env,
}: ById & { input: CreateCreditNoteInput; mark?: WriteMark; env?: Env }): Promise<CreditNoteView> {
	// One id for every attempt, and for every repeat under the request's Idempotency-Key: a refund through Stripe is
	// keyed by it (docs/payments.md#payments-and-refunds), so a repeat after a crash between Stripe's refund and
	// this batch asks Stripe with the same key and gets the same refund back, never a second one.
	const noteId = idOnce(mark, "cn");
	for (let attempt = 1; attempt <= RACE_ATTEMPTS; attempt++) {
		// One batch, so the invoice and its payments are read as of the same moment.
		const [[invoice], paid] = await db.batch([
			db
				.select()
				.from(invoices)
				.where(inScope(scope, invoices, eq(invoices.id, id))),
			db
				.select({ amount: payments.amount })
				.from(payments)
				.where(inScope(scope, payments, eq(payments.invoiceId, id))),
		]);
		if (!invoice) throw notFound("invoice", id);
		const plan = planCreditNote(input, invoice, Decimal.sum(paid.map((row) => Decimal.from(row.amount))));
		const note = noteOf(noteId, invoice, plan, input);
		try {
			// Stripe refunds before anything is stored, so its refusal stores no credit note (null: not paid by Stripe).
			const stripeRefundId =
				env === undefined || plan.refunded.isZero()
					? null
					: await refundThroughStripe(env, db, scope, {
							invoiceId: id,
							amount: plan.refunded,
							currency: invoice.currency,
							creditNoteId: noteId,
						});
			await db.$client.batch(creditNoteStatements(db.$client, invoice, note, plan, mark, stripeRefundId));
			return getCreditNote({ db, scope, id: note.id });
		} catch (error) {
			if (!isAbortedByGuard(error)) throw error;
		}
	}
	throw contention(`invoice ${id}`);
}

function noteOf(id: string, invoice: InvoiceRow, plan: Plan, input: CreateCreditNoteInput): NewCreditNote {
	return {
		id,
		environment: invoice.environment,
		invoiceId: invoice.id,
		accountId: invoice.accountId,
		currency: invoice.currency,
		amount: plan.total.toString(),
		reason: input.reason,
		memo: input.memo ?? null,
		lines: plan.lines,
		toInvoice: plan.toInvoice.toString(),
		refunded: plan.refunded.toString(),
		credited: plan.credited.toString(),
		createdAt: nowIso(),
	};
}

function creditNoteStatements(
	d1: D1Database,
	invoice: InvoiceRow,
	note: NewCreditNote,
	plan: Plan,
	mark: WriteMark | undefined,
	stripeRefundId: string | null,
): D1PreparedStatement[] {
	const environment = invoice.environment;
	const now = note.createdAt;
	const becomesPaid = invoice.status === "open" && plan.dueAfter.isZero();
	const statements = [
		...creditInvoiceGuarded(d1, invoice, {
			creditedMinor: BigInt(invoice.creditedMinor) + toMinor(plan.total, invoice.currency),
			creditedToInvoice: Decimal.from(invoice.creditedToInvoice).add(plan.toInvoice).toString(),
			becomesPaid,
			now,
		}),
		...creditNoteInsert(d1, note),
	];
	const number = creditNoteNumberSql(note.id);
	if (!plan.refunded.isZero()) {
		const refund = {
			id: newId("pay"),
			environment,
			invoiceId: invoice.id,
			accountId: invoice.accountId,
			amount: plan.refunded.negate().toString(),
			currency: invoice.currency,
			createdAt: now,
			provider: stripeRefundId === null ? ("manual" as const) : ("stripe" as const),
		};
		// A refund through Stripe is named by Stripe's refund id (re_…), one made by hand by the credit note's number.
		const reference = stripeRefundId === null ? number : { sql: "?", params: [stripeRefundId] };
		statements.push(refundInsert(d1, refund, reference));
	}
	if (!plan.credited.isZero()) {
		const grant = {
			id: newId("cgr"),
			account_id: invoice.accountId,
			amount: plan.credited.toString(),
			currency: invoice.currency,
			expires_at: null,
			description: null,
			voided_at: null,
			created_at: now,
			remaining: toMinor(plan.credited, invoice.currency).toString(),
		};
		const description = { sql: `'Credit note ' || ${number.sql}`, params: number.params };
		statements.push(...grantInsert(d1, environment, grant, description));
	}
	statements.push(
		...outboxInsertMany(d1, environment, noteEvents(invoice, note, plan, becomesPaid), now),
		auditInsert(
			d1,
			{ environment: environment as Environment },
			{
				action: "credit_note.created",
				resourceId: note.id,
				changes: created({
					invoice_id: invoice.id,
					account_id: invoice.accountId,
					amount: plan.total.toNumber(),
					currency: invoice.currency,
					reason: note.reason,
					memo: note.memo,
					applied: {
						to_invoice: plan.toInvoice.toNumber(),
						refunded: plan.refunded.toNumber(),
						credited: plan.credited.toNumber(),
					},
				}),
			},
		),
		...markStatements(mark, d1, [note.id]),
	);
	return statements;
}

/** credit_note.created, and invoice.paid when the note left nothing due on an open invoice. */
function noteEvents(invoice: InvoiceRow, note: NewCreditNote, plan: Plan, becomesPaid: boolean) {
	const events = [
		{
			id: newId("evt"),
			event: "credit_note.created",
			data: JSON.stringify({
				credit_note_id: note.id,
				invoice_id: invoice.id,
				account_id: invoice.accountId,
				amount: plan.total.toNumber(),
				currency: invoice.currency,
			}),
		},
	];
	if (becomesPaid) {
		const paid: InvoiceRow = { ...invoice, status: "paid", paidAt: note.createdAt };
		events.push({
			id: newId("evt"),
			event: "invoice.paid",
			data: JSON.stringify({ ...invoiceEventData(paid), paid_at: note.createdAt }),
		});
	}
	return events;
}
