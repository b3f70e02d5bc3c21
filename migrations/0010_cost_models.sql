-- Costs of LLM calls priced from the model prices (docs/model-prices.md), per accumulator, month, instance, model
-- and the price's currency; their cost type is "llm_tokens" and their source "model_prices". Kept apart from
-- usage_costs (explicit metadata.cost) so neither table's key changes.
CREATE TABLE `usage_model_costs` (
	`accumulator` text NOT NULL,
	`environment` text NOT NULL,
	`subscription_id` text,
	`agent_key` text NOT NULL,
	`period` text NOT NULL,
	`model` text NOT NULL,
	`currency` text NOT NULL,
	`amount` text NOT NULL,
	`id` text,
	PRIMARY KEY(`accumulator`, `period`, `agent_key`, `model`, `currency`)
);--> statement-breakpoint
CREATE INDEX `usage_model_costs_env_period` ON `usage_model_costs` (`environment`,`period`);--> statement-breakpoint
-- LLM calls no price covered, per accumulator, month, provider ("" when the events named none) and model.
CREATE TABLE `usage_unpriced` (
	`accumulator` text NOT NULL,
	`environment` text NOT NULL,
	`period` text NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`events` integer NOT NULL,
	`input_tokens` text NOT NULL,
	`output_tokens` text NOT NULL,
	`cached_input_tokens` text NOT NULL,
	`reasoning_tokens` text NOT NULL,
	PRIMARY KEY(`accumulator`, `period`, `provider`, `model`)
);--> statement-breakpoint
CREATE INDEX `usage_unpriced_env_period` ON `usage_unpriced` (`environment`,`period`);
