import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// API keys, idempotency records and customer portal sessions: who may call, and replays of what they called.

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
		// committed: the write's own batch stored it, its response is not stored yet (db/write-once.ts).
		state: text("state", { enum: ["in_progress", "committed", "completed"] }).notNull(),
		statusCode: integer("status_code"),
		responseBody: text("response_body"),
		/** The ids a committed write stored, as a JSON array. */
		resources: text("resources"),
		createdAt: text("created_at").notNull(),
		expiresAt: text("expires_at").notNull(),
	},
	(t) => [
		primaryKey({ columns: [t.environment, t.keyId, t.method, t.path, t.key] }),
		index("idempotency_expires").on(t.expiresAt),
	],
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
