-- Every invoice.* webhook event carries the invoice's `collection` (docs/webhooks.md), as GET /v1/invoices/{id}
-- shows it at that moment. The outbox row is written in the batch that changes the invoice, after the change (and
-- after the triggers of 0017 that set the collection as an invoice is issued, paid or voided), so the state read
-- here is the one that batch stored, whichever code path emitted the event. Events naming no stored invoice
-- (test sends' samples) and events that already carry a collection are left as they are.
CREATE TRIGGER `webhook_events_invoice_collection` AFTER INSERT ON `webhook_events`
WHEN NEW.`event` LIKE 'invoice.%'
	AND json_type(NEW.`data`, '$.collection') IS NULL
	AND EXISTS (SELECT 1 FROM `invoices` WHERE `id` = json_extract(NEW.`data`, '$.invoice_id')
		AND `environment` = NEW.`environment`)
BEGIN
	UPDATE `webhook_events` SET `data` = json_set(`data`, '$.collection', (
		SELECT json_object(
			'provider', `collection_provider`,
			'status', `collection_status`,
			'attempts', `collection_attempts`,
			'next_attempt_at', `collection_next_attempt_at`,
			'payment_intent_id', `collection_payment_intent_id`,
			'checkout_session_id', `collection_checkout_session_id`,
			'payment_url', `collection_payment_url`,
			'last_error', `collection_last_error`)
		FROM `invoices` WHERE `id` = json_extract(NEW.`data`, '$.invoice_id')))
	WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
-- A collection that failed (every retry declined) is settled another way: paid by hand or voided, it is canceled
-- as a pending one is (its PaymentIntent canceled at Stripe after the answer, so the customer cannot pay twice), and
-- the account is no longer blocked for it. 0017's trigger covered pending collections only.
DROP TRIGGER `invoices_collection_canceled`;--> statement-breakpoint
CREATE TRIGGER `invoices_collection_canceled` AFTER UPDATE OF `status` ON `invoices`
WHEN OLD.`status` = 'open' AND NEW.`status` IN ('paid', 'void') AND NEW.`collection_status` IN ('pending', 'failed')
BEGIN
	UPDATE `invoices` SET `collection_status` = 'canceled', `collection_next_attempt_at` = NULL,
		`collection_due` = CASE WHEN `collection_payment_intent_id` IS NOT NULL OR `collection_checkout_session_id` IS NOT NULL
			THEN 'cancel' ELSE NULL END
	WHERE `id` = NEW.`id`;
END;
