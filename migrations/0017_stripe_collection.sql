-- Collection through Stripe (docs/payments.md). Accounts say how they pay; invoices carry their collection's
-- state; payments say who collected them; Stripe's events are applied once (their ids kept per environment).
-- No Stripe key or webhook secret is ever stored: they live in the Worker's secrets only.
ALTER TABLE `accounts` ADD `payment_provider` text DEFAULT 'manual' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `stripe_customer_id` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `stripe_payment_method_id` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `block_on_failed_payment` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `provider` text DEFAULT 'manual' NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_provider` text DEFAULT 'manual' NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_status` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_payment_intent_id` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_checkout_session_id` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_payment_url` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_last_error` text;--> statement-breakpoint
ALTER TABLE `invoices` ADD `collection_first_failed_at` text;--> statement-breakpoint
-- The call the service still owes Stripe for this invoice: 'request' (create the PaymentIntent or Checkout
-- Session), 'confirm' (a dunning retry), 'reask' (a credit note changed the amount), 'cancel'; NULL: none.
-- Set in the same statement as the change that needs it, cleared when Stripe answered; the cron re-drives it.
ALTER TABLE `invoices` ADD `collection_due` text;--> statement-breakpoint
-- Each re-ask after a credit note is a new round, so that its calls get Idempotency-Keys of their own.
ALTER TABLE `invoices` ADD `collection_round` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `invoices_collection_due` ON `invoices` (`environment`,`collection_due`) WHERE `collection_due` IS NOT NULL;--> statement-breakpoint
CREATE INDEX `invoices_collection_retry` ON `invoices` (`collection_next_attempt_at`) WHERE `collection_next_attempt_at` IS NOT NULL;--> statement-breakpoint
CREATE INDEX `invoices_collection_failed` ON `invoices` (`environment`,`account_id`) WHERE `collection_status` = 'failed';--> statement-breakpoint
CREATE TABLE `stripe_events` (
	`environment` text NOT NULL,
	`id` text NOT NULL,
	`type` text NOT NULL,
	`received_at` text NOT NULL,
	PRIMARY KEY(`environment`, `id`)
);--> statement-breakpoint
-- An invoice of a Stripe account issued open with something due (or a draft finalized so) starts its collection
-- in the statement that issues it, whichever code path issued it; the request's waitUntil (or the cron) then
-- makes the call. Exact amounts are checked again in decimal before anything is asked of Stripe.
CREATE TRIGGER `invoices_collect_when_issued` AFTER INSERT ON `invoices`
WHEN NEW.`status` = 'open'
	AND CAST(NEW.`amount` AS REAL) - CAST(NEW.`credits_applied` AS REAL) > 0
	AND (SELECT `payment_provider` FROM `accounts` WHERE `id` = NEW.`account_id`) = 'stripe'
BEGIN
	UPDATE `invoices` SET `collection_provider` = 'stripe', `collection_status` = 'pending', `collection_due` = 'request'
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `invoices_collect_when_finalized` AFTER UPDATE OF `status` ON `invoices`
WHEN OLD.`status` = 'draft' AND NEW.`status` = 'open'
	AND CAST(NEW.`amount` AS REAL) - CAST(NEW.`credits_applied` AS REAL) > 0
	AND (SELECT `payment_provider` FROM `accounts` WHERE `id` = NEW.`account_id`) = 'stripe'
BEGIN
	UPDATE `invoices` SET `collection_provider` = 'stripe', `collection_status` = 'pending', `collection_due` = 'request'
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
-- Paid by hand or voided while Stripe was still asked: the request at Stripe is canceled (or its Checkout Session
-- expired) after the answer. A payment through Stripe sets its own status in the same UPDATE, so it is not caught.
CREATE TRIGGER `invoices_collection_canceled` AFTER UPDATE OF `status` ON `invoices`
WHEN OLD.`status` = 'open' AND NEW.`status` IN ('paid', 'void') AND NEW.`collection_status` = 'pending'
BEGIN
	UPDATE `invoices` SET `collection_status` = 'canceled', `collection_next_attempt_at` = NULL,
		`collection_due` = CASE WHEN `collection_payment_intent_id` IS NOT NULL OR `collection_checkout_session_id` IS NOT NULL
			THEN 'cancel' ELSE NULL END
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
-- A credit note on an open invoice being collected changes what is due: Stripe is asked again for the rest.
CREATE TRIGGER `invoices_collection_reask` AFTER UPDATE OF `credited_minor` ON `invoices`
WHEN NEW.`status` = 'open' AND NEW.`collection_status` = 'pending' AND NEW.`credited_minor` <> OLD.`credited_minor`
BEGIN
	UPDATE `invoices` SET `collection_due` = 'reask', `collection_next_attempt_at` = NULL WHERE `id` = NEW.`id`;
END;
