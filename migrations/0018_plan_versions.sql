-- Plan versions and plan changes (docs/plan-versions.md). rate_plans keeps the latest version's prices and its
-- number; every version, the latest included, is a row of rate_plan_versions that never changes. Subscriptions
-- and their plan history name the version that rates them, so a new version leaves existing subscriptions on
-- theirs until they are moved. Every plan that exists already is version 1 of itself.
ALTER TABLE `rate_plans` ADD `version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE TABLE `rate_plan_versions` (
	`rate_plan_id` text NOT NULL,
	`environment` text NOT NULL,
	`version` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`currency` text NOT NULL,
	`base_fee` text NOT NULL,
	`minimum_amount` text DEFAULT '0' NOT NULL,
	`prorate` integer DEFAULT false NOT NULL,
	`charges` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`rate_plan_id`, `version`)
);--> statement-breakpoint
INSERT INTO `rate_plan_versions` (`rate_plan_id`, `environment`, `version`, `name`, `description`, `currency`, `base_fee`, `minimum_amount`, `prorate`, `charges`, `created_at`)
SELECT `id`, `environment`, 1, `name`, `description`, `currency`, `base_fee`, `minimum_amount`, `prorate`, `charges`, `created_at` FROM `rate_plans`;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `rate_plan_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscription_plans` ADD `rate_plan_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
-- The subscriptions on a plan's versions (counts in the plan view, migrate) without scanning every history row.
CREATE INDEX `subscription_plans_plan` ON `subscription_plans` (`rate_plan_id`,`rate_plan_version`);
