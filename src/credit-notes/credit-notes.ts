/**
 * Credit notes as the API shows them (docs/credit-notes.md), and reading them. Amounts are exact decimal strings in
 * D1 and become JSON numbers only here.
 */
import type { z } from "@hono/zod-openapi";
import { statement } from "../db/batch";
import { newestOfAccountOrInvoice } from "../db/pages";
import { type ById, getInScope, type Listing } from "../db/rows";
import { creditNotes } from "../db/schema";
import { Decimal } from "../lib/decimal";
import type { CREDIT_NOTE_REASONS, CreditNote } from "./schemas";

export type CreditNoteRow = typeof creditNotes.$inferSelect;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

export type CreditNoteView = z.infer<typeof CreditNote>;

/** "CN-000042": sequential per environment, six digits until it needs more. */
export function creditNoteNumber(number: number): string {
	return `CN-${String(number).padStart(6, "0")}`;
}

export function creditNoteView(row: CreditNoteRow): CreditNoteView {
	const number = (x: string) => Decimal.from(x).toNumber();
	return {
		id: row.id,
		number: creditNoteNumber(row.number),
		invoice_id: row.invoiceId,
		account_id: row.accountId,
		currency: row.currency,
		amount: number(row.amount),
		reason: row.reason as CreditNoteReason,
		memo: row.memo,
		lines: row.lines.map((line) => ({ description: line.description, amount: number(line.amount) })),
		applied: {
			to_invoice: number(row.toInvoice),
			refunded: number(row.refunded),
			credited: number(row.credited),
		},
		created_at: row.createdAt,
	};
}

/** A credit note to store: its number is the next of its environment, taken by the same batch. */
export type NewCreditNote = Omit<CreditNoteRow, "number">;

/**
 * The inserts of a credit note for the caller's batch: the environment's counter moves on by one and the note
 * takes its value, so numbers are sequential and gapless (a batch that rolls back takes none).
 */
export function creditNoteInsert(d1: D1Database, note: NewCreditNote): D1PreparedStatement[] {
	return [
		statement(
			d1,
			`INSERT INTO credit_note_counters (environment, last_number) VALUES (?1, 1)
			ON CONFLICT (environment) DO UPDATE SET last_number = last_number + 1`,
			note.environment,
		),
		statement(
			d1,
			`INSERT INTO credit_notes (id, environment, number, invoice_id, account_id, currency, amount, reason, memo,
				lines, to_invoice, refunded, credited, created_at)
			VALUES (?2, ?1, (SELECT last_number FROM credit_note_counters WHERE environment = ?1), ?3, ?4, ?5, ?6, ?7, ?8,
				?9, ?10, ?11, ?12, ?13)`,
			note.environment,
			note.id,
			note.invoiceId,
			note.accountId,
			note.currency,
			note.amount,
			note.reason,
			note.memo,
			JSON.stringify(note.lines),
			note.toInvoice,
			note.refunded,
			note.credited,
			note.createdAt,
		),
	];
}

/** The number a credit note stored earlier in the same batch was given, as an SQL expression ("CN-000042"). */
export function creditNoteNumberSql(noteId: string): { sql: string; params: unknown[] } {
	return { sql: "(SELECT 'CN-' || printf('%06d', number) FROM credit_notes WHERE id = ?)", params: [noteId] };
}

export async function getCreditNoteRow({ db, scope, id }: ById): Promise<CreditNoteRow> {
	return getInScope(db, scope, creditNotes, "credit note", id);
}

export async function getCreditNote(input: ById): Promise<CreditNoteView> {
	return creditNoteView(await getCreditNoteRow(input));
}

export interface CreditNoteFilters {
	account_id?: string;
	invoice_id?: string;
}

export async function listCreditNotes({
	db,
	scope,
	filters,
	limit,
	offset,
}: Listing<CreditNoteFilters>): Promise<{ items: CreditNoteView[]; total: number }> {
	const page = { limit, offset };
	const { rows, total } = await newestOfAccountOrInvoice(db, scope, creditNotes, filters, page);
	return { items: rows.map(creditNoteView), total };
}
