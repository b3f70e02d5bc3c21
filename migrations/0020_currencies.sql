-- Currencies (docs/currencies.md): exchange rates with effective times, a billing currency per subscription, and
-- invoices converted per line. Rates and amounts are exact decimal text, never REAL.
CREATE TABLE `exchange_rates` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`base` text NOT NULL,
	`quote` text NOT NULL,
	`rate` text NOT NULL,
	`effective_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `exchange_rates_env_pair` ON `exchange_rates` (`environment`,`base`,`quote`,`effective_at`);--> statement-breakpoint
CREATE INDEX `exchange_rates_env_effective` ON `exchange_rates` (`environment`,`effective_at`,`id`);--> statement-breakpoint
-- The currency a subscription is invoiced in, fixed at creation; existing subscriptions keep their account's.
ALTER TABLE `subscriptions` ADD `billing_currency` text;--> statement-breakpoint
UPDATE `subscriptions` SET `billing_currency` = (SELECT `currency` FROM `accounts` WHERE `accounts`.`id` = `subscriptions`.`account_id`);--> statement-breakpoint
-- The stored rate an invoice was converted at ({id, base, quote, rate, effective_at}); NULL: no conversion.
ALTER TABLE `invoices` ADD `exchange_rate` text;--> statement-breakpoint
-- A line's amount before conversion and its currency; NULL: the line was computed in the invoice's currency.
ALTER TABLE `invoice_lines` ADD `original_amount` text;--> statement-breakpoint
ALTER TABLE `invoice_lines` ADD `original_currency` text;--> statement-breakpoint
-- Invoices refused for want of a rate (a subscription's period), retried by the five-minute cron.
CREATE TABLE `conversion_waits` (
	`environment` text NOT NULL,
	`subscription_id` text NOT NULL,
	`account_id` text NOT NULL,
	`billing_period` text NOT NULL,
	`base` text NOT NULL,
	`quote` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`environment`, `subscription_id`, `billing_period`)
);
