import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Invoices, their lines and numbering, payments, and prepaid credits (grants and their ledger).

export const invoiceCounters = sqliteTable("invoice_counters", {
	environment: text("environment").primaryKey(),
	lastNumber: integer("last_number").notNull(),
});

export const invoices = sqliteTable(
	"invoices",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		number: integer("number").notNull(),
		accountId: text("account_id").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		billingPeriod: text("billing_period").notNull(),
		sequence: integer("sequence").notNull(),
		kind: text("kind", { enum: ["regular", "supplementary", "threshold"] }).notNull(),
		// "draft": not issued yet (docs/credit-notes.md#draft-invoices); its number is a negative placeholder.
		status: text("status", { enum: ["draft", "open", "paid", "void"] }).notNull(),
		currency: text("currency").notNull(),
		amount: text("amount").notNull(),
		issuedAt: text("issued_at").notNull(),
		paidAt: text("paid_at"),
		voidedAt: text("voided_at"),
		createdAt: text("created_at").notNull(),
		// docs/billing.md#invoice-documents-and-payments: issued_at + the account's net terms, and the account's name, email and address when issued.
		dueAt: text("due_at"),
		billTo: text("bill_to", { mode: "json" }).$type<BillTo>(),
		// docs/billing.md#prepaid-credits: what prepaid credits paid of `amount` (amount_due = amount − credits_applied).
		creditsApplied: text("credits_applied").notNull().default("0"),
		// docs/credit-notes.md: what credit notes took of `amount` (minor units), and the part of it off amount_due.
		creditedMinor: integer("credited_minor").notNull().default(0),
		creditedToInvoice: text("credited_to_invoice").notNull().default("0"),
		// Migration 0019 (docs/thresholds-and-recurring-credits.md): a threshold invoice's request number, and
		// what a regular invoice's discount left over, granted as a credit (≤ 0).
		thresholdSequence: integer("threshold_sequence"),
		discountCredited: text("discount_credited").notNull().default("0"),
		// Migration 0020 (docs/currencies.md): the stored rate its lines were converted at; null: no conversion.
		exchangeRate: text("exchange_rate", { mode: "json" }).$type<StoredExchangeRate>(),
	},
	(t) => [
		uniqueIndex("invoices_subscription_period_seq").on(t.subscriptionId, t.billingPeriod, t.sequence),
		uniqueIndex("invoices_env_number").on(t.environment, t.number),
		index("invoices_env_created").on(t.environment, t.createdAt, t.id),
		index("invoices_env_period").on(t.environment, t.billingPeriod),
		index("invoices_env_subscription").on(t.environment, t.subscriptionId, t.billingPeriod),
		index("invoices_env_due").on(t.environment, t.status, t.dueAt),
	],
);

export const invoiceLines = sqliteTable(
	"invoice_lines",
	{
		invoiceId: text("invoice_id").notNull(),
		position: integer("position").notNull(),
		environment: text("environment").notNull(),
		metric: text("metric").notNull(),
		description: text("description").notNull(),
		quantity: text("quantity").notNull(),
		amount: text("amount").notNull(),
		// Per-agent quantity shares of this line's metric in the period, for revenue by agent.
		agentShares: text("agent_shares", { mode: "json" }).$type<
			{ agent_id: string | null; quantity: string }[]
		>(),
		// Migration 0020: the amount before conversion and its currency; null: computed in the invoice's currency.
		originalAmount: text("original_amount"),
		originalCurrency: text("original_currency"),
		// Migration 0023: the start of the part of a split period the line bills (docs/plan-versions.md); else null.
		partStartsAt: text("part_starts_at"),
	},
	(t) => [primaryKey({ columns: [t.invoiceId, t.position] })],
);

export const payments = sqliteTable(
	"payments",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		invoiceId: text("invoice_id").notNull(),
		amount: text("amount").notNull(),
		currency: text("currency").notNull(),
		reference: text("reference"),
		createdAt: text("created_at").notNull(),
		accountId: text("account_id"),
		// "refund": money given back by a credit note, with a negative amount (docs/credit-notes.md).
		kind: text("kind", { enum: ["payment", "refund"] })
			.notNull()
			.default("payment"),
		// Who collected it: "stripe" for a payment or refund made through Stripe (docs/payments.md).
		provider: text("provider", { enum: ["manual", "stripe"] })
			.notNull()
			.default("manual"),
	},
	(t) => [
		uniqueIndex("payments_invoice").on(t.invoiceId).where(sql`kind = 'payment'`),
		index("payments_invoice_all").on(t.invoiceId),
		index("payments_env_created").on(t.environment, t.createdAt, t.id),
	],
);

/** An exchange rate as an invoice keeps it: exact decimal text, as created (docs/currencies.md). */
export interface StoredExchangeRate {
	id: string;
	base: string;
	quote: string;
	rate: string;
	effective_at: string;
}

export interface BillTo {
	name: string;
	email: string;
	billing_address: Record<string, string> | null;
}

// Prepaid credits (docs/billing.md#prepaid-credits). A grant's remaining balance is the sum of its ledger rows, never a stored number.
export const creditGrants = sqliteTable(
	"credit_grants",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		accountId: text("account_id").notNull(),
		amount: text("amount").notNull(),
		currency: text("currency").notNull(),
		expiresAt: text("expires_at"),
		description: text("description"),
		voidedAt: text("voided_at"),
		createdAt: text("created_at").notNull(),
		// Migration 0019 (docs/thresholds-and-recurring-credits.md): a monthly grant's series (its first grant's
		// id), the period each grant is for, the rollover cap, and when the recurrence was stopped.
		recurrence: text("recurrence", { enum: ["monthly"] }),
		rolloverMax: text("rollover_max"),
		seriesId: text("series_id"),
		period: text("period"),
		recurrenceStoppedAt: text("recurrence_stopped_at"),
	},
	(t) => [index("credit_grants_env_account").on(t.environment, t.accountId, t.createdAt, t.id)],
);

// Amounts in minor units of the grant's currency, signed; a trigger refuses any row that overdraws a grant.
export const creditLedger = sqliteTable(
	"credit_ledger",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		grantId: text("grant_id").notNull(),
		accountId: text("account_id").notNull(),
		kind: text("kind", { enum: ["grant", "application", "reversal", "expiry", "void"] }).notNull(),
		amountMinor: integer("amount_minor").notNull(),
		invoiceId: text("invoice_id"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		index("credit_ledger_grant").on(t.grantId, t.createdAt, t.id),
		index("credit_ledger_invoice").on(t.invoiceId),
	],
);
