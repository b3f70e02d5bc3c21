-- Pricing for AI (CONTRACT §16, §18): plan minimums, per-metric aggregates of filtered and max/unique_count
-- charges (written by the usage accumulators), and alerts.
ALTER TABLE `rate_plans` ADD `minimum_amount` text DEFAULT '0' NOT NULL;
