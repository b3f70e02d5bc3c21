import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Exchange rates of an environment (migration 0020): 1 `base` = `rate` `quote` from `effective_at` on. */
export const exchangeRates = sqliteTable(
	"exchange_rates",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		base: text("base").notNull(),
		quote: text("quote").notNull(),
		// Exact decimal text, as created.
		rate: text("rate").notNull(),
		effectiveAt: text("effective_at").notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		index("exchange_rates_env_pair").on(t.environment, t.base, t.quote, t.effectiveAt),
		index("exchange_rates_env_effective").on(t.environment, t.effectiveAt, t.id),
	],
);

/** A subscription's period whose invoice waits for a rate of base → quote; the five-minute cron retries it. */
export const conversionWaits = sqliteTable(
	"conversion_waits",
	{
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		accountId: text("account_id").notNull(),
		billingPeriod: text("billing_period").notNull(),
		base: text("base").notNull(),
		quote: text("quote").notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [primaryKey({ columns: [t.environment, t.subscriptionId, t.billingPeriod] })],
);
