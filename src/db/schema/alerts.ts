import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Alerts and budgets, and the triggers the usage accumulators record.

// Alerts and budgets (docs/pricing.md#alerts-and-budgets); triggers are decided and copied here by the subscription's usage accumulator.
export const alerts = sqliteTable(
	"alerts",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		accountId: text("account_id").notNull(),
		metric: text("metric"),
		threshold: text("threshold").notNull(),
		name: text("name"),
		block: integer("block", { mode: "boolean" }).notNull().default(false),
		type: text("type", { enum: ["usage", "margin"] })
			.notNull()
			.default("usage"),
		// Margin alerts: costs of the period must exceed this (exact decimal) before the margin is judged.
		minCosts: text("min_costs"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		index("alerts_env_created").on(t.environment, t.createdAt, t.id),
		index("alerts_subscription").on(t.environment, t.subscriptionId),
	],
);

export const alertTriggers = sqliteTable(
	"alert_triggers",
	{
		alertId: text("alert_id").notNull(),
		environment: text("environment").notNull(),
		billingPeriod: text("billing_period").notNull(),
		triggeredAt: text("triggered_at").notNull(),
		value: text("value").notNull(),
	},
	(t) => [primaryKey({ columns: [t.alertId, t.billingPeriod] })],
);
