-- Idempotency-Key records are scoped to the calling API key too (CONTRACT §14): the key's id joins the primary
-- key, and each claim gets an id of its own so that a first request abandoned after 60 seconds cannot overwrite
-- the record of the repeat that took its place.
-- The old records are dropped, not copied: they belong to no key, so no caller could ever match them again, and
-- those of POST /v1/api-keys and POST /v1/webhooks hold secrets in plain text. They live 24 hours at most.
DROP TABLE `idempotency_records`;
--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`environment` text NOT NULL,
	`key_id` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`claim_id` text NOT NULL,
	`state` text NOT NULL,
	`status_code` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`environment`, `key_id`, `method`, `path`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires` ON `idempotency_records` (`expires_at`);
