import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Every tenant-owned table carries `environment` ("live" | "test"); see db/scope.ts.
// Money and metered sums are exact decimal strings (lib/decimal.ts), never REAL.
// Timestamps are ISO 8601 UTC strings with milliseconds, so they sort as text.

export const apiKeys = sqliteTable(
	"api_keys",
	{
		id: text("id").primaryKey(),
		environment: text("environment", { enum: ["live", "test"] }).notNull(),
		type: text("type", { enum: ["sdk", "api"] }).notNull(),
		permission: text("permission", { enum: ["read-only", "read-write", "admin"] }),
		name: text("name"),
		prefix: text("prefix").notNull(),
		hash: text("hash").notNull(),
		createdAt: text("created_at").notNull(),
		lastUsedAt: text("last_used_at"),
		revokedAt: text("revoked_at"),
	},
	(t) => [
		uniqueIndex("api_keys_hash").on(t.hash),
		index("api_keys_env_created").on(t.environment, t.createdAt),
	],
);

export const idempotencyRecords = sqliteTable(
	"idempotency_records",
	{
		environment: text("environment").notNull(),
		keyId: text("key_id").notNull(),
		method: text("method").notNull(),
		path: text("path").notNull(),
		key: text("key").notNull(),
		requestHash: text("request_hash").notNull(),
		claimId: text("claim_id").notNull(),
		state: text("state", { enum: ["in_progress", "completed"] }).notNull(),
		statusCode: integer("status_code"),
		responseBody: text("response_body"),
		createdAt: text("created_at").notNull(),
		expiresAt: text("expires_at").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.environment, t.keyId, t.method, t.path, t.key] }),
		index("idempotency_expires").on(t.expiresAt),
	],
);

export const agents = sqliteTable(
	"agents",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		type: text("type", { enum: ["langgraph", "crewai", "n8n", "custom"] }).notNull(),
		description: text("description"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
	},
	(t) => [index("agents_env_created").on(t.environment, t.createdAt, t.id)],
);

export const agentInstances = sqliteTable(
	"agent_instances",
	{
		environment: text("environment").notNull(),
		key: text("key").notNull(),
		agentId: text("agent_id"),
		name: text("name"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.environment, t.key] }),
		index("agent_instances_agent").on(t.environment, t.agentId, t.createdAt),
	],
);

export const accounts = sqliteTable(
	"accounts",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		email: text("email").notNull(),
		billingAddress: text("billing_address", { mode: "json" }).$type<Record<string, string> | null>(),
		currency: text("currency").notNull(),
		externalId: text("external_id"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
		netTermsDays: integer("net_terms_days").notNull().default(30),
	},
	(t) => [
		index("accounts_env_created").on(t.environment, t.createdAt, t.id),
		uniqueIndex("accounts_external_id").on(t.environment, t.externalId),
	],
);

export const ratePlans = sqliteTable(
	"rate_plans",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		name: text("name").notNull(),
		description: text("description"),
		currency: text("currency").notNull(),
		baseFee: text("base_fee").notNull(),
		charges: text("charges", { mode: "json" }).$type<unknown[]>().notNull(),
		status: text("status", { enum: ["active", "archived"] }).notNull(),
		// Migration 0003 adds it last; the column order of drizzle does not matter to its queries.
		minimumAmount: text("minimum_amount").notNull().default("0"),
		createdAt: text("created_at").notNull(),
		// Migration 0004: bill the base fee in proportion to the time active in the period (§19).
		prorate: integer("prorate", { mode: "boolean" }).notNull().default(false),
	},
	(t) => [index("rate_plans_env_created").on(t.environment, t.createdAt, t.id)],
);

export const subscriptions = sqliteTable(
	"subscriptions",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		accountId: text("account_id").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		pendingRatePlanId: text("pending_rate_plan_id"),
		status: text("status", { enum: ["active", "cancelled"] }).notNull(),
		startedAt: text("started_at").notNull(),
		cancelledAt: text("cancelled_at"),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
		// Migration 0004: set by a cancellation at period end; the cron cancels it at that instant (§19).
		cancelAt: text("cancel_at"),
		// Migration 0006: set while the instances' unbilled usage waits to be adopted (§19, adopt_unbilled_usage).
		adoptPending: integer("adopt_pending", { mode: "boolean" }).notNull().default(false),
		// Migration 0007: how many usage accumulators count its events (1–64), fixed at creation.
		shards: integer("shards").notNull().default(1),
	},
	(t) => [
		index("subscriptions_env_created").on(t.environment, t.createdAt, t.id),
		index("subscriptions_account").on(t.environment, t.accountId),
		// Invoicing reads groups of subscriptions by id: with only the index above, SQLite would scan the
		// environment's subscriptions for each group.
		index("subscriptions_env_id").on(t.environment, t.id),
		index("subscriptions_cancel_at").on(t.cancelAt).where(sql`cancel_at IS NOT NULL`),
		index("subscriptions_adopt_pending").on(t.adoptPending).where(sql`adopt_pending = 1`),
	],
);

// Plan history: the plan in effect for period P is the row with the greatest effective_period <= P.
export const subscriptionPlans = sqliteTable(
	"subscription_plans",
	{
		subscriptionId: text("subscription_id").notNull(),
		effectivePeriod: text("effective_period").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
	},
	(t) => [primaryKey({ columns: [t.subscriptionId, t.effectivePeriod] })],
);

// Membership history of instances in subscriptions. An open row (removed_at null) is an active membership;
// the partial unique index keeps an instance in at most one active subscription.
export const subscriptionInstances = sqliteTable(
	"subscription_instances",
	{
		id: integer("id").primaryKey({ autoIncrement: true }),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		agentKey: text("agent_key").notNull(),
		addedAt: text("added_at").notNull(),
		removedAt: text("removed_at"),
	},
	(t) => [
		uniqueIndex("subscription_instances_active").on(t.environment, t.agentKey).where(sql`removed_at IS NULL`),
		index("subscription_instances_sub").on(t.subscriptionId),
		// An instance's membership history (latest row first by id): event routing and usage reads look it up.
		index("subscription_instances_key").on(t.environment, t.agentKey),
	],
);

// Raw events as v1 flushed them from the usage accumulators. No longer written (migration 0002, CONTRACT §15: the
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

// Quantities of filtered, max and unique_count charge sources per accumulator, period and instance (§16).
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

// Migration 0011: costs of LLM calls priced from the model prices, per accumulator, month, instance, model and
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

// Migration 0011: LLM calls no price covered, per accumulator, month, provider ("" for none) and model.
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

export const invoiceCounters = sqliteTable("invoice_counters", {
	environment: text("environment").primaryKey(),
	lastNumber: integer("last_number").notNull(),
});

export const invoices = sqliteTable(
	"invoices",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		number: integer("number").notNull(),
		accountId: text("account_id").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		ratePlanId: text("rate_plan_id").notNull(),
		billingPeriod: text("billing_period").notNull(),
		sequence: integer("sequence").notNull(),
		kind: text("kind", { enum: ["regular", "supplementary"] }).notNull(),
		status: text("status", { enum: ["open", "paid", "void"] }).notNull(),
		currency: text("currency").notNull(),
		amount: text("amount").notNull(),
		issuedAt: text("issued_at").notNull(),
		paidAt: text("paid_at"),
		voidedAt: text("voided_at"),
		createdAt: text("created_at").notNull(),
		// §20: issued_at + the account's net terms, and the account's name, email and address when issued.
		dueAt: text("due_at"),
		billTo: text("bill_to", { mode: "json" }).$type<BillTo>(),
		// §17: what prepaid credits paid of `amount` (amount_due = amount − credits_applied).
		creditsApplied: text("credits_applied").notNull().default("0"),
	},
	(t) => [
		uniqueIndex("invoices_subscription_period_seq").on(t.subscriptionId, t.billingPeriod, t.sequence),
		uniqueIndex("invoices_env_number").on(t.environment, t.number),
		index("invoices_env_created").on(t.environment, t.createdAt, t.id),
		index("invoices_env_period").on(t.environment, t.billingPeriod),
		index("invoices_env_subscription").on(t.environment, t.subscriptionId, t.billingPeriod),
		index("invoices_env_due").on(t.environment, t.status, t.dueAt),
	],
);

export const invoiceLines = sqliteTable(
	"invoice_lines",
	{
		invoiceId: text("invoice_id").notNull(),
		position: integer("position").notNull(),
		environment: text("environment").notNull(),
		metric: text("metric").notNull(),
		description: text("description").notNull(),
		quantity: text("quantity").notNull(),
		amount: text("amount").notNull(),
		// Per-agent quantity shares of this line's metric in the period, for revenue by agent.
		agentShares: text("agent_shares", { mode: "json" }).$type<
			{ agent_id: string | null; quantity: string }[]
		>(),
	},
	(t) => [primaryKey({ columns: [t.invoiceId, t.position] })],
);

export const payments = sqliteTable(
	"payments",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		invoiceId: text("invoice_id").notNull(),
		amount: text("amount").notNull(),
		currency: text("currency").notNull(),
		reference: text("reference"),
		createdAt: text("created_at").notNull(),
		accountId: text("account_id"),
	},
	(t) => [
		uniqueIndex("payments_invoice").on(t.invoiceId),
		index("payments_env_created").on(t.environment, t.createdAt, t.id),
	],
);

export interface BillTo {
	name: string;
	email: string;
	billing_address: Record<string, string> | null;
}

// Prepaid credits (§17). A grant's remaining balance is the sum of its ledger rows, never a stored number.
export const creditGrants = sqliteTable(
	"credit_grants",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		accountId: text("account_id").notNull(),
		amount: text("amount").notNull(),
		currency: text("currency").notNull(),
		expiresAt: text("expires_at"),
		description: text("description"),
		voidedAt: text("voided_at"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [index("credit_grants_env_account").on(t.environment, t.accountId, t.createdAt, t.id)],
);

// Amounts in minor units of the grant's currency, signed; a trigger refuses any row that overdraws a grant.
export const creditLedger = sqliteTable(
	"credit_ledger",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		grantId: text("grant_id").notNull(),
		accountId: text("account_id").notNull(),
		kind: text("kind", { enum: ["grant", "application", "reversal", "expiry", "void"] }).notNull(),
		amountMinor: integer("amount_minor").notNull(),
		invoiceId: text("invoice_id"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		index("credit_ledger_grant").on(t.grantId, t.createdAt, t.id),
		index("credit_ledger_invoice").on(t.invoiceId),
	],
);

export const webhookEndpoints = sqliteTable(
	"webhook_endpoints",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		url: text("url").notNull(),
		events: text("events", { mode: "json" }).$type<string[]>().notNull(),
		description: text("description"),
		status: text("status", { enum: ["enabled", "disabled"] }).notNull(),
		secret: text("secret").notNull(),
		createdAt: text("created_at").notNull(),
		updatedAt: text("updated_at").notNull(),
	},
	(t) => [index("webhook_endpoints_env_created").on(t.environment, t.createdAt, t.id)],
);

// The outbox: written in the same D1 batch as the change that causes the event, delivered afterwards.
export const webhookEvents = sqliteTable(
	"webhook_events",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		event: text("event").notNull(),
		data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
		createdAt: text("created_at").notNull(),
		dispatchedAt: text("dispatched_at"),
		// A sample sent by POST /v1/webhooks/test: its body carries "test": true, and it is never fanned out.
		test: integer("test", { mode: "boolean" }).notNull().default(false),
	},
	(t) => [index("webhook_events_undispatched").on(t.dispatchedAt, t.createdAt)],
);

export const webhookDeliveries = sqliteTable(
	"webhook_deliveries",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		endpointId: text("endpoint_id").notNull(),
		eventId: text("event_id").notNull(),
		event: text("event").notNull(),
		status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
		attempts: integer("attempts").notNull(),
		lastStatusCode: integer("last_status_code"),
		lastError: text("last_error"),
		nextAttemptAt: text("next_attempt_at"),
		createdAt: text("created_at").notNull(),
		deliveredAt: text("delivered_at"),
	},
	(t) => [
		uniqueIndex("webhook_deliveries_endpoint_event").on(t.endpointId, t.eventId),
		index("webhook_deliveries_endpoint_created").on(t.endpointId, t.createdAt, t.id),
		index("webhook_deliveries_pending").on(t.status, t.nextAttemptAt),
	],
);

// Alerts and budgets (§18); triggers are decided and copied here by the subscription's usage accumulator.
export const alerts = sqliteTable(
	"alerts",
	{
		id: text("id").primaryKey(),
		environment: text("environment").notNull(),
		subscriptionId: text("subscription_id").notNull(),
		accountId: text("account_id").notNull(),
		metric: text("metric"),
		threshold: text("threshold").notNull(),
		name: text("name"),
		block: integer("block", { mode: "boolean" }).notNull().default(false),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		index("alerts_env_created").on(t.environment, t.createdAt, t.id),
		index("alerts_subscription").on(t.environment, t.subscriptionId),
	],
);

export const alertTriggers = sqliteTable(
	"alert_triggers",
	{
		alertId: text("alert_id").notNull(),
		environment: text("environment").notNull(),
		billingPeriod: text("billing_period").notNull(),
		triggeredAt: text("triggered_at").notNull(),
		value: text("value").notNull(),
	},
	(t) => [primaryKey({ columns: [t.alertId, t.billingPeriod] })],
);

// Customer portal sessions (docs/portal.md): only the SHA-256 of the token is stored, like API keys.
export const portalSessions = sqliteTable(
	"portal_sessions",
	{
		id: text("id").primaryKey(),
		environment: text("environment", { enum: ["live", "test"] }).notNull(),
		accountId: text("account_id").notNull(),
		tokenHash: text("token_hash").notNull(),
		expiresAt: text("expires_at").notNull(),
		revokedAt: text("revoked_at"),
		createdAt: text("created_at").notNull(),
	},
	(t) => [
		uniqueIndex("portal_sessions_token_hash").on(t.tokenHash),
		index("portal_sessions_env_account").on(t.environment, t.accountId, t.createdAt),
	],
);

/** Custom model prices of an environment (migration 0009); the catalog lives in src/model-prices/catalog-data.ts. */
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
