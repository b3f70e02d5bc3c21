import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Agents, their instances, and the accounts (customers) that are billed.

export const agents = sqliteTable(
	"agents",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		type: text("type", { enum: ["langgraph", "crewai", "n8n", "custom"] }).notNull(),
		description: text("description"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
	},
	(t) => [index("agents_env_created").on(t.environment, t.createdAt, t.id)],
);

export const agentInstances = sqliteTable(
	"agent_instances",
	{
		environment: text("environment").notNull(),
		key: text("key").notNull(),
		agentId: text("agent_id"),
		name: text("name"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.environment, t.key] }),
		index("agent_instances_agent").on(t.environment, t.agentId, t.createdAt),
	],
);

export const accounts = sqliteTable(
	"accounts",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		email: text("email").notNull(),
		billingAddress: text("billing_address", { mode: "json" }).$type<Record<string, string> | null>(),
		currency: text("currency").notNull(),
		externalId: text("external_id"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
		netTermsDays: integer("net_terms_days").notNull().default(30),
		// Days a period's invoice stays a draft (docs/credit-notes.md#draft-invoices).
		invoiceGraceDays: integer("invoice_grace_days").notNull().default(0),
		// How the account pays (docs/payments.md): by hand, or collected through Stripe.
		paymentProvider: text("payment_provider", { enum: ["manual", "stripe"] })
			.notNull()
			.default("manual"),
		stripeCustomerId: text("stripe_customer_id"),
		stripePaymentMethodId: text("stripe_payment_method_id"),
		blockOnFailedPayment: integer("block_on_failed_payment", { mode: "boolean" }).notNull().default(false),
		// Its parent account, two levels at most (docs/account-hierarchies.md): who pays, whose credits it may use.
		parentAccountId: text("parent_account_id"),
		billing: text("billing", { enum: ["self", "parent"] })
			.notNull()
			.default("self"),
		useParentCredits: integer("use_parent_credits", { mode: "boolean" }).notNull().default(false),
	},
	(t) => [
		index("accounts_env_created").on(t.environment, t.createdAt, t.id),
		uniqueIndex("accounts_external_id").on(t.environment, t.externalId),
	],
);
