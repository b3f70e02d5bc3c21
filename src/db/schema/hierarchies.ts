import { sqliteTable, text } from "drizzle-orm/sqlite-core";

// Account hierarchies (docs/account-hierarchies.md).

/**
 * The payer column of `invoices` (migration 0021), as a table of its own for drizzle, as `invoiceCollections`
 * is: code that issues invoices elsewhere builds InvoiceRow without it. Issuing sets it; a trigger fills it in
 * for any invoice stored without one, from the account's billing at that instant.
 */
export const invoicePayers = sqliteTable("invoices", {
	id: text("id").primaryKey(),
	environment: text("environment").notNull(),
	accountId: text("account_id").notNull(),
	billingPeriod: text("billing_period").notNull(),
	status: text("status", { enum: ["draft", "open", "paid", "void"] }).notNull(),
	currency: text("currency").notNull(),
	payerAccountId: text("payer_account_id"),
});
