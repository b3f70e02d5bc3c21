-- The audit log (docs/audit-log.md): one row per change, written in the same D1 batch as the change itself.
-- `seq` orders the log: each insert takes the next number inside its batch (D1 runs batches one at a time), and
-- both `id` and `at` are derived so they never go backwards against it, so "newest first by at, then id" is
-- "by seq" and a page cursor (a seq) is never overtaken by a later write. Rows are never updated or deleted.
-- The id, made from seq, is unique without an index of its own; each index ends in seq (the rowid), so it
-- also serves "newest first" within its filter.
CREATE TABLE `audit_records` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`environment` text NOT NULL,
	`at` text NOT NULL,
	`actor_type` text NOT NULL,
	`key_id` text,
	`key_prefix` text,
	`action` text NOT NULL,
	`resource_type` text NOT NULL,
	`resource_id` text NOT NULL,
	`request_id` text,
	`changes` text NOT NULL
);--> statement-breakpoint
CREATE INDEX `audit_records_env` ON `audit_records` (`environment`);--> statement-breakpoint
CREATE INDEX `audit_records_env_resource` ON `audit_records` (`environment`,`resource_id`);--> statement-breakpoint
CREATE INDEX `audit_records_env_key` ON `audit_records` (`environment`,`key_id`);--> statement-breakpoint
CREATE INDEX `audit_records_env_at` ON `audit_records` (`environment`,`at`);
