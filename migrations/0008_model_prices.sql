-- Custom model prices (negotiated rates, models the catalog lacks, dated changes), one environment each. The
-- catalog ships in the code (src/model-costs/catalog-data.ts) and is not stored. Money is exact decimal text.
CREATE TABLE `model_prices` (
	`id` text PRIMARY KEY NOT NULL,
	`environment` text NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`currency` text NOT NULL,
	`input_per_million` text NOT NULL,
	`output_per_million` text NOT NULL,
	`cached_input_per_million` text NOT NULL,
	`reasoning_per_million` text NOT NULL,
	`per_request` text NOT NULL,
	`effective_from` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `model_prices_env_model` ON `model_prices` (`environment`,`model`,`provider`,`effective_from`);
