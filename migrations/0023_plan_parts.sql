-- Plan changes "now" (docs/plan-versions.md#changing-now): a change splits the current billing period at its
-- instant. The plan history's row for the period names the plan the period ends on (the last part's); each
-- earlier part of the period is a row here, [starts_at, ends_at) with the plan, version and negotiated prices
-- that rated it. A period without rows is one part, as before.
CREATE TABLE `subscription_plan_parts` (
	`subscription_id` text NOT NULL,
	`period` text NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`rate_plan_id` text NOT NULL,
	`rate_plan_version` integer NOT NULL,
	`price_overrides` text,
	PRIMARY KEY(`subscription_id`, `starts_at`)
);--> statement-breakpoint
CREATE INDEX `subscription_plan_parts_period` ON `subscription_plan_parts` (`subscription_id`, `period`);--> statement-breakpoint
-- The part of a split period an invoice line bills: the instant the part starts; null on a period of one part and
-- on lines of the whole period (minimum top-up, discount).
ALTER TABLE `invoice_lines` ADD `part_starts_at` text;
