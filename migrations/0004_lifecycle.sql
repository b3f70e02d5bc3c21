-- Subscription lifecycle (CONTRACT §19): plans may prorate their base fee; a subscription may be set to cancel at
-- the end of its period.
ALTER TABLE `rate_plans` ADD `prorate` integer DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `cancel_at` text;
--> statement-breakpoint
-- The cron finds subscriptions due to be cancelled without scanning the others.
CREATE INDEX `subscriptions_cancel_at` ON `subscriptions` (`cancel_at`) WHERE `cancel_at` IS NOT NULL;
--> statement-breakpoint
-- Cost records built from events get ids sortable by creation time (CONTRACT §1): each rollup row takes one at
-- its first flush and keeps it. Rows flushed before this migration have none until their next flush.
ALTER TABLE `usage_costs` ADD `id` text;
