/**
 * Issuing a credit note (docs/credit-notes.md). Its amount goes first off what is still unpaid of the invoice's
 * amount due; the rest, on what was paid or covered by credits, is refunded (a payment row of kind refund, with
 * a negative amount) or given back as a credit grant of the account.
 *
 * D1 has no interactive transactions, so the plan is made from a read and the batch that stores it is guarded:
 * its first statement updates the invoice only if nothing changed since the read (status, and what credit notes
 * had taken), and `abortUnlessChanged` rolls the whole batch back otherwise. The loser of a race reads again and
 * plans again, so concurrent credit notes can never together take more than the invoice's amount.
 */
import { eq } from "drizzle-orm";
import { auditInsert, created } from "../audit/record";
import { ledgerInsert } from "../credits/ledger";
import { fromMinor, toMinor } from "../credits/plan";
import { abortUnlessChanged, isAbortedByGuard, returned, statement } from "../db/batch";
import type { ById } from "../db/rows";
import { invoices, payments } from "../db/schema";
import { inScope } from "../db/scope";
import type { Env, Environment } from "../env";
import { type InvoiceRow, invoiceEventData, invoiceNumber } from "../invoicing/invoices";
import { Decimal } from "../lib/decimal";
import { conflict, notFound, validationError } from "../lib/errors";
import { newId } from "../lib/ids";
import { minorUnits } from "../lib/money";
import { nowIso } from "../lib/time";
import { refundThroughStripe } from "../payment-provider/refunds";
import { outboxInsertMany } from "../webhooks/outbox";
import { type CreditNoteView, creditNoteView } from "./credit-notes";
import type { CreateCreditNoteInput } from "./schemas";

/** Each lost race means another credit note was stored; this many rounds cover any realistic contention. */
const RACE_ATTEMPTS = 100;

interface Plan {
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
function planCreditNote(input: CreateCreditNoteInput, invoice: InvoiceRow, paid: Decimal): Plan {
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

export async function issueCreditNote({
	db,
	scope,
	id,
	input,
	env,
}: ById & { input: CreateCreditNoteInput; env?: Env }): Promise<CreditNoteView> {
	// One id for every attempt: a refund through Stripe is keyed by it (docs/payments.md#payments-and-refunds).
	const noteId = newId("cn");
	for (let attempt = 1; ; attempt++) {
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
		try {
			const refundId =
				env === undefined || plan.refunded.isZero()
					? null
					: await refundThroughStripe(env, db, scope, {
							invoiceId: id,
							amount: plan.refunded,
							currency: invoice.currency,
							creditNoteId: noteId,
						});
			return await storeCreditNote(db.$client, invoice, plan, input, noteId, refundId);
		} catch (error) {
			if (!isAbortedByGuard(error) || attempt === RACE_ATTEMPTS) throw error;
		}
	}
}

async function storeCreditNote(
	d1: D1Database,
	invoice: InvoiceRow,
	plan: Plan,
	input: CreateCreditNoteInput,
	noteId: string,
	refundId: string | null,
): Promise<CreditNoteView> {
	const environment = invoice.environment;
	const now = nowIso();
	const creditedMinor = toMinor(plan.total, invoice.currency);
	const becomesPaid = invoice.status === "open" && plan.dueAfter.isZero();
	const thisNumber = "(SELECT last_number FROM credit_note_counters WHERE environment = ?1)";
	const statements: D1PreparedStatement[] = [
		statement(
			d1,
			`UPDATE invoices SET credited_minor = credited_minor + ?3, credited_to_invoice = ?4,
				status = CASE WHEN ?5 THEN 'paid' ELSE status END, paid_at = CASE WHEN ?5 THEN ?6 ELSE paid_at END
			WHERE environment = ?1 AND id = ?2 AND status = ?7 AND credited_minor = ?8`,
			environment,
			invoice.id,
			creditedMinor.toString(),
			Decimal.from(invoice.creditedToInvoice).add(plan.toInvoice).toString(),
			becomesPaid ? 1 : 0,
			now,
			invoice.status,
			invoice.creditedMinor,
		),
		abortUnlessChanged(d1),
		statement(
			d1,
			`INSERT INTO credit_note_counters (environment, last_number) VALUES (?1, 1)
			ON CONFLICT (environment) DO UPDATE SET last_number = last_number + 1`,
			environment,
		),
		statement(
			d1,
			`INSERT INTO credit_notes (id, environment, number, invoice_id, account_id, currency, amount, reason, memo,
				lines, to_invoice, refunded, credited, created_at)
			VALUES (?2, ?1, ${thisNumber}, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
			RETURNING number`,
			environment,
			noteId,
			invoice.id,
			invoice.accountId,
			invoice.currency,
			plan.total.toString(),
			input.reason,
			input.memo ?? null,
			JSON.stringify(plan.lines),
			plan.toInvoice.toString(),
			plan.refunded.toString(),
			plan.credited.toString(),
			now,
		),
	];
	if (!plan.refunded.isZero()) {
		statements.push(
			statement(
				d1,
				`INSERT INTO payments (id, environment, invoice_id, account_id, amount, currency, reference, created_at, kind,
					provider)
				VALUES (?2, ?1, ?3, ?4, ?5, ?6, coalesce(?8, 'CN-' || printf('%06d', ${thisNumber})), ?7, 'refund',
					CASE WHEN ?8 IS NULL THEN 'manual' ELSE 'stripe' END)`,
				environment,
				newId("pay"),
				invoice.id,
				invoice.accountId,
				plan.refunded.negate().toString(),
				invoice.currency,
				now,
				refundId,
			),
		);
	}
	if (!plan.credited.isZero()) {
		const grantId = newId("cgr");
		statements.push(
			statement(
				d1,
				`INSERT INTO credit_grants (id, environment, account_id, amount, currency, expires_at, description,
					voided_at, created_at)
				VALUES (?2, ?1, ?3, ?4, ?5, NULL, 'Credit note CN-' || printf('%06d', ${thisNumber}), NULL, ?6)`,
				environment,
				grantId,
				invoice.accountId,
				plan.credited.toString(),
				invoice.currency,
				now,
			),
			...ledgerInsert(
				d1,
				environment,
				[
					{
						id: newId("cle"),
						grant_id: grantId,
						account_id: invoice.accountId,
						kind: "grant",
						amount_minor: toMinor(plan.credited, invoice.currency).toString(),
						invoice_id: null,
					},
				],
				now,
			),
		);
	}
	const events = [
		{
			id: newId("evt"),
			event: "credit_note.created",
			data: JSON.stringify({
				credit_note_id: noteId,
				invoice_id: invoice.id,
				account_id: invoice.accountId,
				amount: plan.total.toNumber(),
				currency: invoice.currency,
			}),
		},
	];
	if (becomesPaid) {
		const paid: InvoiceRow = { ...invoice, status: "paid", paidAt: now };
		events.push({
			id: newId("evt"),
			event: "invoice.paid",
			data: JSON.stringify({ ...invoiceEventData(paid), paid_at: now }),
		});
	}
	statements.push(
		...outboxInsertMany(d1, environment, events, now),
		auditInsert(
			d1,
			{ environment: environment as Environment },
			{
				action: "credit_note.created",
				resourceId: noteId,
				changes: created({
					invoice_id: invoice.id,
					account_id: invoice.accountId,
					amount: plan.total.toNumber(),
					currency: invoice.currency,
					reason: input.reason,
					memo: input.memo ?? null,
					applied: {
						to_invoice: plan.toInvoice.toNumber(),
						refunded: plan.refunded.toNumber(),
						credited: plan.credited.toNumber(),
					},
				}),
			},
		),
	);
	const results = await d1.batch(statements);
	const [stored] = returned<{ number: number }>(results[3]);
	if (stored === undefined) throw new Error(`credit note ${noteId} was stored without a number`);
	return creditNoteView({
		id: noteId,
		environment,
		number: stored.number,
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
		createdAt: now,
	});
}
