import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Collection through Stripe (docs/payments.md).

/**
 * The collection columns of `invoices` (migration 0017), as a table of their own for drizzle: what issues and
 * reads invoices elsewhere builds InvoiceRow without them, and triggers fill them in as invoices are issued,
 * paid or voided. Only payments/ writes them.
 */
export const invoiceCollections = sqliteTable("invoices", {
	id: text("id").primaryKey(),
	environment: text("environment").notNull(),
	accountId: text("account_id").notNull(),
	status: text("status", { enum: ["draft", "open", "paid", "void"] }).notNull(),
	paidAt: text("paid_at"),
	collectionProvider: text("collection_provider", { enum: ["manual", "stripe"] })
		.notNull()
		.default("manual"),
	collectionStatus: text("collection_status", {
		enum: ["none", "pending", "succeeded", "failed", "canceled"],
	})
		.notNull()
		.default("none"),
	collectionAttempts: integer("collection_attempts").notNull().default(0),
	collectionNextAttemptAt: text("collection_next_attempt_at"),
	collectionPaymentIntentId: text("collection_payment_intent_id"),
	collectionCheckoutSessionId: text("collection_checkout_session_id"),
	collectionPaymentUrl: text("collection_payment_url"),
	collectionLastError: text("collection_last_error"),
	collectionFirstFailedAt: text("collection_first_failed_at"),
	// The call still owed to Stripe (see the migration); NULL: none.
	collectionDue: text("collection_due", { enum: ["request", "confirm", "reask", "cancel"] }),
	collectionRound: integer("collection_round").notNull().default(1),
});

// Stripe events already applied (docs/payments.md#stripes-webhooks): a redelivery finds its id here.
export const stripeEvents = sqliteTable(
	"stripe_events",
	{
		environment: text("environment").notNull(),
		id: text("id").notNull(),
		type: text("type").notNull(),
		receivedAt: text("received_at").notNull(),
	},
	(t) => [primaryKey({ columns: [t.environment, t.id] })],
);
