import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Coupons and the discounts that apply them to subscriptions (migration 0014, docs/discounts.md).

export const coupons = sqliteTable(
	"coupons",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		code: text("code").notNull(),
		name: text("name"),
		/** Exact decimal strings; exactly one of percent_off and amount_off is set. */
		percentOff: text("percent_off"),
		amountOff: text("amount_off"),
		/** The currency of amount_off; null for percent_off. */
		currency: text("currency"),
		duration: text("duration", { enum: ["once", "repeating", "forever"] }).notNull(),
		durationInPeriods: integer("duration_in_periods"),
		maxRedemptions: integer("max_redemptions"),
		redeemBy: text("redeem_by"),
		timesRedeemed: integer("times_redeemed").notNull().default(0),
		status: text("status", { enum: ["active", "archived"] }).notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		uniqueIndex("coupons_env_code").on(t.environment, t.code),
		index("coupons_env_created").on(t.environment, t.createdAt, t.id),
	],
);

export const subscriptionDiscounts = sqliteTable(
	"subscription_discounts",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		couponId: text("coupon_id").notNull(),
		startPeriod: text("start_period").notNull(),
		/** The last period covered, inclusive; null: every period from start_period on. */
		endPeriod: text("end_period"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [index("subscription_discounts_sub").on(t.subscriptionId, t.startPeriod)],
);
