-- Customer portal sessions (docs/portal.md): a short-lived link for one account. Only the SHA-256 of the token is
-- kept, like API keys; a session answers until expires_at or until revoked_at is set, whichever comes first.
CREATE TABLE `portal_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`account_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX `portal_sessions_token_hash` ON `portal_sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `portal_sessions_env_account` ON `portal_sessions` (`environment`,`account_id`,`created_at`);
