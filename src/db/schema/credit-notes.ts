import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Credit notes (docs/credit-notes.md): corrections of an issued invoice and where their money went.

export const creditNoteCounters = sqliteTable("credit_note_counters", {
	environment: text("environment").primaryKey(),
	lastNumber: integer("last_number").notNull(),
});

export interface CreditNoteLine {
	description: string;
	amount: string;
}

export const creditNotes = sqliteTable(
	"credit_notes",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		number: integer("number").notNull(),
		invoiceId: text("invoice_id").notNull(),
		accountId: text("account_id").notNull(),
		currency: text("currency").notNull(),
		amount: text("amount").notNull(),
		reason: text("reason").notNull(),
		memo: text("memo"),
		lines: text("lines", { mode: "json" }).notNull().$type<CreditNoteLine[]>(),
		// Where the amount went: off the invoice's amount due, refunded, or given back as a credit grant.
		toInvoice: text("to_invoice").notNull(),
		refunded: text("refunded").notNull(),
		credited: text("credited").notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		uniqueIndex("credit_notes_env_number").on(t.environment, t.number),
		index("credit_notes_env_created").on(t.environment, t.createdAt, t.id),
		index("credit_notes_invoice").on(t.invoiceId),
	],
);
