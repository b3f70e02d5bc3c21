-- Threshold invoices and recurring credits (docs/thresholds-and-recurring-credits.md).
-- A subscription's invoicing threshold, in its billing currency: NULL means none.
ALTER TABLE `subscriptions` ADD `invoicing_threshold` text;--> statement-breakpoint
-- The accumulator's request number of a threshold invoice (1, 2, … per subscription and period): a request
-- retried after a crash finds the invoice it already made, so a crossing is invoiced exactly once.
ALTER TABLE `invoices` ADD `threshold_sequence` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_threshold_request` ON `invoices` (`subscription_id`,`billing_period`,`threshold_sequence`) WHERE `threshold_sequence` IS NOT NULL;--> statement-breakpoint
-- What the regular invoice's discount could not take, granted as a credit (a negative amount, or '0').
ALTER TABLE `invoices` ADD `discount_credited` text DEFAULT '0' NOT NULL;--> statement-breakpoint
-- Recurring grants: the grant that recurs is the series' first one; each period's grant names it and its period.
ALTER TABLE `credit_grants` ADD `recurrence` text;--> statement-breakpoint
ALTER TABLE `credit_grants` ADD `rollover_max` text;--> statement-breakpoint
ALTER TABLE `credit_grants` ADD `series_id` text;--> statement-breakpoint
ALTER TABLE `credit_grants` ADD `period` text;--> statement-breakpoint
-- Set when the recurrence was stopped (a void of any grant of the series).
ALTER TABLE `credit_grants` ADD `recurrence_stopped_at` text;--> statement-breakpoint
CREATE UNIQUE INDEX `credit_grants_series_period` ON `credit_grants` (`series_id`,`period`) WHERE `series_id` IS NOT NULL;
