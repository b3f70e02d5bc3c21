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
