-- Negotiated prices (docs/discounts.md): a plan-history row may carry price overrides, a JSON array of
-- {metric, model, …model fields, included_quantity?}; NULL when the period is rated at the plan's list prices.
ALTER TABLE `subscription_plans` ADD `price_overrides` text;--> statement-breakpoint
-- Coupons of an environment; percent_off and amount_off are exact decimal strings, exactly one of them is set.
CREATE TABLE `coupons` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`code` text NOT NULL,
	`name` text,
	`percent_off` text,
	`amount_off` text,
	`currency` text,
	`duration` text NOT NULL,
	`duration_in_periods` integer,
	`max_redemptions` integer,
	`redeem_by` text,
	`times_redeemed` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX `coupons_env_code` ON `coupons` (`environment`,`code`);--> statement-breakpoint
CREATE INDEX `coupons_env_created` ON `coupons` (`environment`,`created_at`,`id`);--> statement-breakpoint
-- A coupon applied to a subscription, covering the periods start_period..end_period (NULL: forever).
CREATE TABLE `subscription_discounts` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text NOT NULL,
	`coupon_id` text NOT NULL,
	`start_period` text NOT NULL,
	`end_period` text,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE INDEX `subscription_discounts_sub` ON `subscription_discounts` (`subscription_id`,`start_period`);
