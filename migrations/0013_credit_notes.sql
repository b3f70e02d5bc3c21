-- Credit notes (docs/credit-notes.md): corrections of an issued invoice, numbered CN-000001… per environment.
CREATE TABLE `credit_note_counters` (
	`environment` text PRIMARY KEY NOT NULL,
	`last_number` integer NOT NULL
);--> statement-breakpoint
CREATE TABLE `credit_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`number` integer NOT NULL,
	`invoice_id` text NOT NULL,
	`account_id` text NOT NULL,
	`currency` text NOT NULL,
	`amount` text NOT NULL,
	`reason` text NOT NULL,
	`memo` text,
	`lines` text NOT NULL,
	`to_invoice` text NOT NULL,
	`refunded` text NOT NULL,
	`credited` text NOT NULL,
	`created_at` text NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX `credit_notes_env_number` ON `credit_notes` (`environment`,`number`);--> statement-breakpoint
CREATE INDEX `credit_notes_env_created` ON `credit_notes` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `credit_notes_invoice` ON `credit_notes` (`invoice_id`);--> statement-breakpoint
-- What credit notes took of an invoice, in total and off its amount due (the rest was refunded or credited),
-- in minor units of its currency so that the guard "never more than the invoice's amount" is integer arithmetic.
ALTER TABLE `invoices` ADD `credited_minor` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `credited_to_invoice` text DEFAULT '0' NOT NULL;--> statement-breakpoint
-- A refund is a payment row of kind 'refund' with a negative amount; an invoice still has one payment at most.
ALTER TABLE `payments` ADD `kind` text DEFAULT 'payment' NOT NULL;--> statement-breakpoint
DROP INDEX `payments_invoice`;--> statement-breakpoint
CREATE UNIQUE INDEX `payments_invoice` ON `payments` (`invoice_id`) WHERE `kind` = 'payment';--> statement-breakpoint
CREATE INDEX `payments_invoice_all` ON `payments` (`invoice_id`);--> statement-breakpoint
-- Draft invoices (docs/credit-notes.md#draft-invoices): with grace days, a period's invoice is a draft first. A
-- draft has no number yet; the column stays NOT NULL and unique, so a draft holds a negative placeholder that
-- the API shows as null and finalizing replaces with the next number.
ALTER TABLE `accounts` ADD `invoice_grace_days` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `invoices_env_drafts` ON `invoices` (`environment`,`status`,`created_at`) WHERE `status` = 'draft';
