import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Custom model prices of an environment (migration 0008); the catalog lives in src/model-costs/catalog-data.ts. */
export const modelPrices = sqliteTable(
	"model_prices",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		provider: text("provider").notNull(),
		model: text("model").notNull(),
		currency: text("currency").notNull(),
		inputPerMillion: text("input_per_million").notNull(),
		outputPerMillion: text("output_per_million").notNull(),
		cachedInputPerMillion: text("cached_input_per_million").notNull(),
		reasoningPerMillion: text("reasoning_per_million").notNull(),
		perRequest: text("per_request").notNull(),
		effectiveFrom: text("effective_from").notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [index("model_prices_env_model").on(t.environment, t.model, t.provider, t.effectiveFrom)],
);
