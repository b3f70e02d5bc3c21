import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Rate plans and subscriptions, with the plan and instance-membership history of each subscription.

export const ratePlans = sqliteTable(
	"rate_plans",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		description: text("description"),
		currency: text("currency").notNull(),
		baseFee: text("base_fee").notNull(),
		charges: text("charges", { mode: "json" }).$type<unknown[]>().notNull(),
		status: text("status", { enum: ["active", "archived"] }).notNull(),
		// Migration 0003 adds it last; the column order of drizzle does not matter to its queries.
		minimumAmount: text("minimum_amount").notNull().default("0"),
		createdAt: text("created_at").notNull(),
		// Migration 0004: bill the base fee in proportion to the time active in the period (docs/billing.md#subscription-lifecycle).
		prorate: integer("prorate", { mode: "boolean" }).notNull().default(false),
		// Migration 0018: the latest version's number; the row holds that version's prices (docs/plan-versions.md).
		version: integer("version").notNull().default(1),
	},
	(t) => [index("rate_plans_env_created").on(t.environment, t.createdAt, t.id)],
);

// Migration 0018: every version of every plan, the latest included; a row never changes once written.
export const ratePlanVersions = sqliteTable(
	"rate_plan_versions",
	{
		ratePlanId: text("rate_plan_id").notNull(),
		environment: text("environment").notNull(),
		version: integer("version").notNull(),
		name: text("name").notNull(),
		description: text("description"),
		currency: text("currency").notNull(),
		baseFee: text("base_fee").notNull(),
		minimumAmount: text("minimum_amount").notNull().default("0"),
		prorate: integer("prorate", { mode: "boolean" }).notNull().default(false),
		charges: text("charges", { mode: "json" }).$type<unknown[]>().notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [primaryKey({ columns: [t.ratePlanId, t.version] })],
);

export const subscriptions = sqliteTable(
	"subscriptions",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		accountId: text("account_id").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		pendingRatePlanId: text("pending_rate_plan_id"),
		status: text("status", { enum: ["active", "cancelled"] }).notNull(),
		startedAt: text("started_at").notNull(),
		cancelledAt: text("cancelled_at"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
		// Migration 0004: set by a cancellation at period end; the cron cancels it at that instant (docs/billing.md#subscription-lifecycle).
		cancelAt: text("cancel_at"),
		// Migration 0006: set while the instances' unbilled usage waits to be adopted (docs/billing.md#subscription-lifecycle, adopt_unbilled_usage).
		adoptPending: integer("adopt_pending", { mode: "boolean" }).notNull().default(false),
		// Migration 0007: how many usage accumulators count its events (1–64), fixed at creation.
		shards: integer("shards").notNull().default(1),
		// Migration 0018: the version of rate_plan_id, kept in step with the plan history like it.
		ratePlanVersion: integer("rate_plan_version").notNull().default(1),
		// Migration 0019: the threshold of the period's usage that makes a threshold invoice (docs/thresholds-and-recurring-credits.md).
		invoicingThreshold: text("invoicing_threshold"),
		// Migration 0020: the currency its invoices are in, fixed at creation (docs/currencies.md).
		billingCurrency: text("billing_currency"),
	},
	(t) => [
		index("subscriptions_env_created").on(t.environment, t.createdAt, t.id),
		index("subscriptions_account").on(t.environment, t.accountId),
		// Invoicing reads groups of subscriptions by id: with only the index above, SQLite would scan the
		// environment's subscriptions for each group.
		index("subscriptions_env_id").on(t.environment, t.id),
		index("subscriptions_cancel_at").on(t.cancelAt).where(sql`cancel_at IS NOT NULL`),
		index("subscriptions_adopt_pending").on(t.adoptPending).where(sql`adopt_pending = 1`),
	],
);

// Plan history: the plan in effect for period P is the row with the greatest effective_period <= P.
export const subscriptionPlans = sqliteTable(
	"subscription_plans",
	{
		subscriptionId: text("subscription_id").notNull(),
		effectivePeriod: text("effective_period").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		// Migration 0014: the subscription's negotiated prices for these periods (JSON; null: the plan's prices).
		priceOverrides: text("price_overrides", { mode: "json" }).$type<unknown[]>(),
		// Migration 0018: the version of rate_plan_id that rates these periods.
		ratePlanVersion: integer("rate_plan_version").notNull().default(1),
	},
	(t) => [
		primaryKey({ columns: [t.subscriptionId, t.effectivePeriod] }),
		index("subscription_plans_plan").on(t.ratePlanId, t.ratePlanVersion),
	],
);

// Migration 0023: the earlier parts of a billing period split by a plan change "now" (docs/plan-versions.md),
// each [starts_at, ends_at) with what rated it; the plan history's row for the period rates its last part.
export const subscriptionPlanParts = sqliteTable(
	"subscription_plan_parts",
	{
		subscriptionId: text("subscription_id").notNull(),
		period: text("period").notNull(),
		startsAt: text("starts_at").notNull(),
		endsAt: text("ends_at").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		ratePlanVersion: integer("rate_plan_version").notNull(),
		priceOverrides: text("price_overrides"),
	},
	(t) => [
		primaryKey({ columns: [t.subscriptionId, t.startsAt] }),
		index("subscription_plan_parts_period").on(t.subscriptionId, t.period),
	],
);

// Membership history of instances in subscriptions. An open row (removed_at null) is an active membership;
// the partial unique index keeps an instance in at most one active subscription.
export const subscriptionInstances = sqliteTable(
	"subscription_instances",
	{
		id: integer("id").primaryKey({ autoIncrement: true }),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		agentKey: text("agent_key").notNull(),
		addedAt: text("added_at").notNull(),
		removedAt: text("removed_at"),
	},
	(t) => [
		uniqueIndex("subscription_instances_active").on(t.environment, t.agentKey).where(sql`removed_at IS NULL`),
		index("subscription_instances_sub").on(t.subscriptionId),
		// An instance's membership history (latest row first by id): event routing and usage reads look it up.
		index("subscription_instances_key").on(t.environment, t.agentKey),
	],
);
