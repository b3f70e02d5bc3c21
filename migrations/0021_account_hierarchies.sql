-- Account hierarchies (docs/account-hierarchies.md): an account may have a parent (two levels at most) that pays
-- its invoices (billing 'parent') or shares its prepaid credits (use_parent_credits). Invoices say who pays them.
ALTER TABLE `accounts` ADD `parent_account_id` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `billing` text DEFAULT 'self' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `use_parent_credits` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `accounts_parent` ON `accounts` (`environment`,`parent_account_id`) WHERE `parent_account_id` IS NOT NULL;--> statement-breakpoint
ALTER TABLE `invoices` ADD `payer_account_id` text;--> statement-breakpoint
UPDATE `invoices` SET `payer_account_id` = `account_id`;--> statement-breakpoint
CREATE INDEX `invoices_env_payer` ON `invoices` (`environment`,`payer_account_id`,`billing_period`);--> statement-breakpoint
-- The hierarchy's rules, checked again inside the write that changes it, so that two requests at once cannot make
-- three levels or a cycle: the parent exists in the same environment and has no parent, the account is not its
-- own parent and has no children, and billing 'parent' has a parent. The API checks first, with clearer words.
CREATE TRIGGER `accounts_hierarchy_on_insert` BEFORE INSERT ON `accounts`
WHEN (NEW.`parent_account_id` IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM `accounts` p WHERE p.`id` = NEW.`parent_account_id` AND p.`environment` = NEW.`environment`
			AND p.`parent_account_id` IS NULL))
	OR (NEW.`billing` = 'parent' AND NEW.`parent_account_id` IS NULL)
BEGIN
	SELECT RAISE(ABORT, 'account_hierarchy');
END;--> statement-breakpoint
CREATE TRIGGER `accounts_hierarchy_on_update` BEFORE UPDATE OF `parent_account_id`, `billing` ON `accounts`
WHEN (NEW.`parent_account_id` IS NOT NULL AND (NEW.`parent_account_id` = NEW.`id`
		OR NOT EXISTS (SELECT 1 FROM `accounts` p WHERE p.`id` = NEW.`parent_account_id`
			AND p.`environment` = NEW.`environment` AND p.`parent_account_id` IS NULL)
		OR EXISTS (SELECT 1 FROM `accounts` c WHERE c.`environment` = NEW.`environment`
			AND c.`parent_account_id` = NEW.`id`)))
	OR (NEW.`billing` = 'parent' AND NEW.`parent_account_id` IS NULL)
BEGIN
	SELECT RAISE(ABORT, 'account_hierarchy');
END;--> statement-breakpoint
-- An invoice stored without a payer (drafts, and any path that does not plan one) is paid by whom the account's
-- billing names at that instant; issuing a draft sets it again (finalize.ts).
CREATE TRIGGER `invoices_payer_when_stored` AFTER INSERT ON `invoices`
WHEN NEW.`payer_account_id` IS NULL
BEGIN
	UPDATE `invoices` SET `payer_account_id` = (
		SELECT CASE WHEN a.`billing` = 'parent' AND a.`parent_account_id` IS NOT NULL THEN a.`parent_account_id` ELSE a.`id` END
		FROM `accounts` a WHERE a.`id` = NEW.`account_id`)
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
-- Collection (migration 0017) goes through the payer's payment provider: the two triggers that start it are made
-- again to read the payer's, not the invoice account's. The payer is computed as the trigger above does when the
-- insert did not name one (the order in which triggers of one statement fire is not to be relied on).
DROP TRIGGER `invoices_collect_when_issued`;--> statement-breakpoint
DROP TRIGGER `invoices_collect_when_finalized`;--> statement-breakpoint
CREATE TRIGGER `invoices_collect_when_issued` AFTER INSERT ON `invoices`
WHEN NEW.`status` = 'open'
	AND CAST(NEW.`amount` AS REAL) - CAST(NEW.`credits_applied` AS REAL) > 0
	AND (SELECT p.`payment_provider` FROM `accounts` p WHERE p.`id` = COALESCE(NEW.`payer_account_id`, (
		SELECT CASE WHEN a.`billing` = 'parent' AND a.`parent_account_id` IS NOT NULL THEN a.`parent_account_id` ELSE a.`id` END
		FROM `accounts` a WHERE a.`id` = NEW.`account_id`))) = 'stripe'
BEGIN
	UPDATE `invoices` SET `collection_provider` = 'stripe', `collection_status` = 'pending', `collection_due` = 'request'
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `invoices_collect_when_finalized` AFTER UPDATE OF `status` ON `invoices`
WHEN OLD.`status` = 'draft' AND NEW.`status` = 'open'
	AND CAST(NEW.`amount` AS REAL) - CAST(NEW.`credits_applied` AS REAL) > 0
	AND (SELECT p.`payment_provider` FROM `accounts` p WHERE p.`id` = COALESCE(NEW.`payer_account_id`, NEW.`account_id`)) = 'stripe'
BEGIN
	UPDATE `invoices` SET `collection_provider` = 'stripe', `collection_status` = 'pending', `collection_due` = 'request'
	WHERE `id` = NEW.`id`;
END;
