import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Metered usage: v1 raw events, daily rollups, metrics, operator costs carried by events, and recorded costs.

// Raw events as v1 flushed them from the usage accumulators. No longer written (migration 0002, docs/metering.md#where-events-live: the
// accumulators keep raw events and archive them to R2); kept, without its indexes, for the rows v1 wrote.
export const usageEvents = sqliteTable("usage_events", {
	id: text("id").primaryKey(),
	environment: text("environment").notNull(),
	kind: text("kind", { enum: ["action", "outcome"] }).notNull(),
	agentKey: text("agent_key").notNull(),
	type: text("type").notNull(),
	value: text("value"),
	metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown> | null>(),
	timestamp: text("timestamp").notNull(),
	receivedAt: text("received_at").notNull(),
	subscriptionId: text("subscription_id"),
	accumulator: text("accumulator").notNull(),
	idempotencyKey: text("idempotency_key"),
});

// Daily rollups, written by each accumulator as absolute values (a retried flush rewrites the same numbers).
// field "" is the events themselves: count, and for outcomes the sum of values. Other fields are numeric
// metadata keys of actions: count of events carrying the field and the sum of its values.
export const usageDaily = sqliteTable(
	"usage_daily",
	{
		accumulator: text("accumulator").notNull(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id"),
		agentKey: text("agent_key").notNull(),
		day: text("day").notNull(),
		kind: text("kind", { enum: ["action", "outcome"] }).notNull(),
		type: text("type").notNull(),
		field: text("field").notNull(),
		count: integer("count").notNull(),
		sum: text("sum").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.accumulator, t.day, t.agentKey, t.kind, t.type, t.field] }),
		// environment first, as every query filters on it: otherwise SQLite prefers the instance index below and
		// scans the environment's rows for each group of subscriptions being invoiced.
		index("usage_daily_subscription").on(t.environment, t.subscriptionId, t.day),
		index("usage_daily_instance").on(t.environment, t.agentKey, t.day),
	],
);

// Quantities of filtered, max and unique_count charge sources per accumulator, period and instance (docs/pricing.md#filters-aggregations-and-minimums).
export const usageMetrics = sqliteTable(
	"usage_metrics",
	{
		accumulator: text("accumulator").notNull(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id"),
		agentKey: text("agent_key").notNull(),
		period: text("period").notNull(),
		source: text("source").notNull(),
		quantity: text("quantity").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.accumulator, t.period, t.agentKey, t.source] }),
		index("usage_metrics_subscription").on(t.environment, t.subscriptionId, t.period),
	],
);

// Operator costs carried by actions (metadata.cost), per accumulator, month, instance, cost type and currency.
export const usageCosts = sqliteTable(
	"usage_costs",
	{
		accumulator: text("accumulator").notNull(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id"),
		agentKey: text("agent_key").notNull(),
		period: text("period").notNull(),
		costType: text("cost_type").notNull(),
		currency: text("currency").notNull(),
		amount: text("amount").notNull(),
		// Migration 0004: taken at the row's first flush, kept by later ones (a time-sortable cost id).
		id: text("id"),
	},
	(t) => [
		primaryKey({ columns: [t.accumulator, t.period, t.agentKey, t.costType, t.currency] }),
		index("usage_costs_env_period").on(t.environment, t.period),
	],
);

// Migration 0010: costs of LLM calls priced from the model prices, per accumulator, month, instance, model and
// currency (cost type "llm_tokens", source "model_prices").
export const usageModelCosts = sqliteTable(
	"usage_model_costs",
	{
		accumulator: text("accumulator").notNull(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id"),
		agentKey: text("agent_key").notNull(),
		period: text("period").notNull(),
		model: text("model").notNull(),
		currency: text("currency").notNull(),
		amount: text("amount").notNull(),
		id: text("id"),
	},
	(t) => [
		primaryKey({ columns: [t.accumulator, t.period, t.agentKey, t.model, t.currency] }),
		index("usage_model_costs_env_period").on(t.environment, t.period),
	],
);

// Migration 0010: LLM calls no price covered, per accumulator, month, provider ("" for none) and model.
export const usageUnpriced = sqliteTable(
	"usage_unpriced",
	{
		accumulator: text("accumulator").notNull(),
		environment: text("environment").notNull(),
		period: text("period").notNull(),
		provider: text("provider").notNull(),
		model: text("model").notNull(),
		events: integer("events").notNull(),
		inputTokens: text("input_tokens").notNull(),
		outputTokens: text("output_tokens").notNull(),
		cachedInputTokens: text("cached_input_tokens").notNull(),
		reasoningTokens: text("reasoning_tokens").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.accumulator, t.period, t.provider, t.model] }),
		index("usage_unpriced_env_period").on(t.environment, t.period),
	],
);

export const costRecords = sqliteTable(
	"cost_records",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		agentId: text("agent_id"),
		customerId: text("customer_id"),
		costType: text("cost_type").notNull(),
		amount: text("amount").notNull(),
		currency: text("currency").notNull(),
		period: text("period").notNull(),
		createdAt: text("created_at").notNull(),
	},
	(t) => [index("cost_records_env_period").on(t.environment, t.period)],
);
