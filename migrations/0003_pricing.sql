-- Pricing for AI (CONTRACT §16, §18): plan minimums, per-metric aggregates of filtered and max/unique_count
-- charges (written by the usage accumulators), and alerts.
ALTER TABLE `rate_plans` ADD `minimum_amount` text DEFAULT '0' NOT NULL;
--> statement-breakpoint
-- Per period, instance and source: the quantities of filtered, max and unique_count charges, flushed by the
-- usage accumulators as absolute values (like usage_daily). `source` is the canonical key of a charge's source.
CREATE TABLE `usage_metrics` (
	`accumulator` text NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text,
	`agent_key` text NOT NULL,
	`period` text NOT NULL,
	`source` text NOT NULL,
	`quantity` text NOT NULL,
	PRIMARY KEY(`accumulator`, `period`, `agent_key`, `source`)
);
--> statement-breakpoint
CREATE INDEX `usage_metrics_subscription` ON `usage_metrics` (`environment`,`subscription_id`,`period`);
--> statement-breakpoint
-- Alerts and budgets (§18). Whether an alert triggered in a period is decided by its subscription's accumulator,
-- which copies each trigger here with its flush (one row per alert and period at most).
CREATE TABLE `alerts` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text NOT NULL,
	`account_id` text NOT NULL,
	`metric` text,
	`threshold` text NOT NULL,
	`name` text,
	`block` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alerts_env_created` ON `alerts` (`environment`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `alerts_subscription` ON `alerts` (`environment`,`subscription_id`);
--> statement-breakpoint
CREATE TABLE `alert_triggers` (
	`alert_id` text NOT NULL,
	`environment` text NOT NULL,
	`billing_period` text NOT NULL,
	`triggered_at` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`alert_id`, `billing_period`)
);
