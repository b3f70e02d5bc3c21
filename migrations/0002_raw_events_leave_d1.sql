-- Raw events leave D1 (CONTRACT §15): the usage accumulators keep them and archive them to R2, and D1 keeps
-- entities and aggregates only. Nothing writes usage_events any more and nothing reads it. The table is kept, not
-- dropped: its rows are the only copy of the events flushed before this version (they were never archived), so
-- an operator can still export them (`wrangler d1 export`); a later migration drops it. Its three indexes, about
-- half of its bytes, go now.
DROP INDEX IF EXISTS `usage_events_instance`;--> statement-breakpoint
DROP INDEX IF EXISTS `usage_events_subscription`;--> statement-breakpoint
DROP INDEX IF EXISTS `usage_events_idempotency`;
