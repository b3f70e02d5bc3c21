import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// The audit log (docs/audit-log.md): who changed what, appended in the batch of each change, never rewritten.
// Every index ends in the implicit rowid (`seq`), so each one also serves "newest first" within its filter.

export const auditRecords = sqliteTable(
	"audit_records",
	{
		seq: integer("seq").primaryKey(),
		id: text("id").notNull(),
		environment: text("environment").notNull(),
		at: text("at").notNull(),
		actorType: text("actor_type", {
			enum: ["operator", "api_key", "sdk_key", "portal", "system"],
		}).notNull(),
		keyId: text("key_id"),
		keyPrefix: text("key_prefix"),
		action: text("action").notNull(),
		resourceType: text("resource_type").notNull(),
		resourceId: text("resource_id").notNull(),
		requestId: text("request_id"),
		changes: text("changes", { mode: "json" }).$type<Record<string, unknown[]>>().notNull(),
	},
	(t) => [
		index("audit_records_env").on(t.environment),
		index("audit_records_env_resource").on(t.environment, t.resourceId),
		index("audit_records_env_key").on(t.environment, t.keyId),
		index("audit_records_env_at").on(t.environment, t.at),
	],
);
