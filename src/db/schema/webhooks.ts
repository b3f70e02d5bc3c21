import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Webhook endpoints, the outbox of events, and the delivery attempts.

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
