CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`name` text NOT NULL,
	`email` text NOT NULL,
	`billing_address` text,
	`currency` text NOT NULL,
	`external_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `accounts_env_created` ON `accounts` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_external_id` ON `accounts` (`environment`,`external_id`);--> statement-breakpoint
CREATE TABLE `agent_instances` (
	`environment` text NOT NULL,
	`key` text NOT NULL,
	`agent_id` text,
	`name` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`environment`, `key`)
);
--> statement-breakpoint
CREATE INDEX `agent_instances_agent` ON `agent_instances` (`environment`,`agent_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `agents_env_created` ON `agents` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`type` text NOT NULL,
	`permission` text,
	`name` text,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_env_created` ON `api_keys` (`environment`,`created_at`);--> statement-breakpoint
CREATE TABLE `cost_records` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`agent_id` text,
	`customer_id` text,
	`cost_type` text NOT NULL,
	`amount` text NOT NULL,
	`currency` text NOT NULL,
	`period` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `cost_records_env_period` ON `cost_records` (`environment`,`period`);--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`environment` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`status_code` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`environment`, `method`, `path`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires` ON `idempotency_records` (`expires_at`);--> statement-breakpoint
CREATE TABLE `invoice_counters` (
	`environment` text PRIMARY KEY NOT NULL,
	`last_number` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `invoice_lines` (
	`invoice_id` text NOT NULL,
	`position` integer NOT NULL,
	`environment` text NOT NULL,
	`metric` text NOT NULL,
	`description` text NOT NULL,
	`quantity` text NOT NULL,
	`amount` text NOT NULL,
	`agent_shares` text,
	PRIMARY KEY(`invoice_id`, `position`)
);
--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`number` integer NOT NULL,
	`account_id` text NOT NULL,
	`subscription_id` text NOT NULL,
	`rate_plan_id` text NOT NULL,
	`billing_period` text NOT NULL,
	`sequence` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`currency` text NOT NULL,
	`amount` text NOT NULL,
	`issued_at` text NOT NULL,
	`paid_at` text,
	`voided_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_subscription_period_seq` ON `invoices` (`subscription_id`,`billing_period`,`sequence`);--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_env_number` ON `invoices` (`environment`,`number`);--> statement-breakpoint
CREATE INDEX `invoices_env_created` ON `invoices` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_env_period` ON `invoices` (`environment`,`billing_period`);--> statement-breakpoint
CREATE INDEX `invoices_env_subscription` ON `invoices` (`environment`,`subscription_id`,`billing_period`);--> statement-breakpoint
CREATE TABLE `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`invoice_id` text NOT NULL,
	`amount` text NOT NULL,
	`currency` text NOT NULL,
	`reference` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_invoice` ON `payments` (`invoice_id`);--> statement-breakpoint
CREATE TABLE `rate_plans` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`currency` text NOT NULL,
	`base_fee` text NOT NULL,
	`charges` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_plans_env_created` ON `rate_plans` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `subscription_instances` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text NOT NULL,
	`agent_key` text NOT NULL,
	`added_at` text NOT NULL,
	`removed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscription_instances_active` ON `subscription_instances` (`environment`,`agent_key`) WHERE removed_at IS NULL;--> statement-breakpoint
CREATE INDEX `subscription_instances_sub` ON `subscription_instances` (`subscription_id`);--> statement-breakpoint
CREATE INDEX `subscription_instances_key` ON `subscription_instances` (`environment`,`agent_key`);--> statement-breakpoint
CREATE TABLE `subscription_plans` (
	`subscription_id` text NOT NULL,
	`effective_period` text NOT NULL,
	`rate_plan_id` text NOT NULL,
	PRIMARY KEY(`subscription_id`, `effective_period`)
);
--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`account_id` text NOT NULL,
	`rate_plan_id` text NOT NULL,
	`pending_rate_plan_id` text,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`cancelled_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `subscriptions_env_created` ON `subscriptions` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `subscriptions_account` ON `subscriptions` (`environment`,`account_id`);--> statement-breakpoint
CREATE INDEX `subscriptions_env_id` ON `subscriptions` (`environment`,`id`);--> statement-breakpoint
CREATE TABLE `usage_costs` (
	`accumulator` text NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text,
	`agent_key` text NOT NULL,
	`period` text NOT NULL,
	`cost_type` text NOT NULL,
	`currency` text NOT NULL,
	`amount` text NOT NULL,
	PRIMARY KEY(`accumulator`, `period`, `agent_key`, `cost_type`, `currency`)
);
--> statement-breakpoint
CREATE INDEX `usage_costs_env_period` ON `usage_costs` (`environment`,`period`);--> statement-breakpoint
CREATE TABLE `usage_daily` (
	`accumulator` text NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text,
	`agent_key` text NOT NULL,
	`day` text NOT NULL,
	`kind` text NOT NULL,
	`type` text NOT NULL,
	`field` text NOT NULL,
	`count` integer NOT NULL,
	`sum` text NOT NULL,
	PRIMARY KEY(`accumulator`, `day`, `agent_key`, `kind`, `type`, `field`)
);
--> statement-breakpoint
CREATE INDEX `usage_daily_subscription` ON `usage_daily` (`environment`,`subscription_id`,`day`);--> statement-breakpoint
CREATE INDEX `usage_daily_instance` ON `usage_daily` (`environment`,`agent_key`,`day`);--> statement-breakpoint
CREATE TABLE `usage_events` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`kind` text NOT NULL,
	`agent_key` text NOT NULL,
	`type` text NOT NULL,
	`value` text,
	`metadata` text,
	`timestamp` text NOT NULL,
	`received_at` text NOT NULL,
	`subscription_id` text,
	`accumulator` text NOT NULL,
	`idempotency_key` text
);
--> statement-breakpoint
CREATE INDEX `usage_events_instance` ON `usage_events` (`environment`,`agent_key`,`timestamp`);--> statement-breakpoint
CREATE INDEX `usage_events_subscription` ON `usage_events` (`subscription_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `usage_events_idempotency` ON `usage_events` (`environment`,`idempotency_key`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` text,
	`created_at` text NOT NULL,
	`delivered_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_endpoint_event` ON `webhook_deliveries` (`endpoint_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_created` ON `webhook_deliveries` (`endpoint_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_env_created` ON `webhook_endpoints` (`environment`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`event` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	`dispatched_at` text,
	`test` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_events_undispatched` ON `webhook_events` (`dispatched_at`,`created_at`);