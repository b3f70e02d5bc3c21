-- Shards of a hot subscription (issue #14): how many usage accumulators count its events, fixed at creation.
-- Every subscription made before this migration has one, the accumulator it always had.
ALTER TABLE `subscriptions` ADD `shards` integer DEFAULT 1 NOT NULL;
