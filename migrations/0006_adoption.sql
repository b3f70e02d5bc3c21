-- Adoption of unbilled usage (CONTRACT §19): a subscription created with adopt_unbilled_usage keeps this flag set
-- until its instances' usage since started_at was moved into it; the 5-minute cron finishes what a failed
-- request left.
ALTER TABLE `subscriptions` ADD `adopt_pending` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE INDEX `subscriptions_adopt_pending` ON `subscriptions` (`adopt_pending`) WHERE `adopt_pending` = 1;
