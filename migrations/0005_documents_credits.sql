-- Invoice documents and payments (CONTRACT §20) and prepaid credits (§17).
ALTER TABLE `accounts` ADD `net_terms_days` integer DEFAULT 30 NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `due_at` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `bill_to` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `credits_applied` text DEFAULT '0' NOT NULL;--> statement-breakpoint
-- Invoices issued before this migration: every account had the default 30 days of terms; the bill-to is the
-- account as it is now (the nearest record there is of it).
UPDATE `invoices` SET `due_at` = strftime('%Y-%m-%dT%H:%M:%fZ', `issued_at`, '+30 days') WHERE `due_at` IS NULL;--> statement-breakpoint
UPDATE `invoices` SET `bill_to` = (
	SELECT json_object('name', a.name, 'email', a.email, 'billing_address', json(a.billing_address))
	FROM `accounts` a WHERE a.id = `invoices`.`account_id`
) WHERE `bill_to` IS NULL;--> statement-breakpoint
CREATE INDEX `invoices_env_due` ON `invoices` (`environment`,`status`,`due_at`);--> statement-breakpoint
ALTER TABLE `payments` ADD `account_id` text;--> statement-breakpoint
UPDATE `payments` SET `account_id` = (SELECT `account_id` FROM `invoices` WHERE `invoices`.`id` = `payments`.`invoice_id`);--> statement-breakpoint
CREATE INDEX `payments_env_created` ON `payments` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `credit_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`account_id` text NOT NULL,
	`amount` text NOT NULL,
	`currency` text NOT NULL,
	`expires_at` text,
	`description` text,
	`voided_at` text,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE INDEX `credit_grants_env_account` ON `credit_grants` (`environment`,`account_id`,`created_at`,`id`);--> statement-breakpoint
-- Every movement of a grant's balance, in minor units of its currency (signed integers, so SUM is exact):
-- grant (+), application to an invoice (−), reversal of an application by a void (+), expiry (−), void (−).
CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`grant_id` text NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`invoice_id` text,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE INDEX `credit_ledger_grant` ON `credit_ledger` (`grant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `credit_ledger_invoice` ON `credit_ledger` (`invoice_id`);--> statement-breakpoint
-- The one rule that keeps concurrent spenders honest: no grant's ledger may ever sum below zero. D1 has no
-- interactive transactions, so two invoices created at once both plan to spend what they read; the second
-- batch to commit trips this and rolls back whole, and is planned again from what is left.
CREATE TRIGGER `credit_ledger_never_overdrawn` AFTER INSERT ON `credit_ledger`
WHEN (SELECT SUM(`amount_minor`) FROM `credit_ledger` WHERE `grant_id` = NEW.`grant_id`) < 0
BEGIN
	SELECT RAISE(ABORT, 'credit_overdrawn');
END;
