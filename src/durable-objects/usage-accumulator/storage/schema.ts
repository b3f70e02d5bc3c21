/**
 * Every table of the accumulator's SQLite storage, in one place: the store creates them with its first write
 * (store.ts); the alerts, plans, reservations and shard reports create theirs when first used, since most
 * accumulators never have any. What each table holds is said beside its statements.
 */

/** The accumulator's name, account and billable start (store.ts). */
const META = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
`;

/** The running aggregates and the webhook outbox (aggregate-rows.ts, parts/aggregates.ts, parts/flush.ts). */
const AGGREGATES = `
CREATE TABLE IF NOT EXISTS daily (
	day TEXT NOT NULL, agent_key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
	count INTEGER NOT NULL, sum TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, agent_key, kind, type, field));
CREATE INDEX IF NOT EXISTS daily_unflushed ON daily (day) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS daily_unbilled (
	day TEXT NOT NULL, agent_key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, field TEXT NOT NULL,
	count INTEGER NOT NULL, sum TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, agent_key, kind, type, field));
CREATE INDEX IF NOT EXISTS daily_unbilled_unflushed ON daily_unbilled (day) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS costs (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, cost_type TEXT NOT NULL, currency TEXT NOT NULL,
	amount TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (period, agent_key, cost_type, currency));
CREATE INDEX IF NOT EXISTS costs_unflushed ON costs (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, data TEXT NOT NULL);
`;

/** Which instances this accumulator holds, at which generation (holdings.ts). */
export const HOLDINGS_SCHEMA = `
CREATE TABLE IF NOT EXISTS holdings (
	agent_key TEXT PRIMARY KEY, generation INTEGER NOT NULL, held INTEGER NOT NULL, imported INTEGER NOT NULL DEFAULT -1);
`;

/** Raw events in small groups until archived and for 36 days (raw-events.ts). */
export const RAW_EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS raw_events (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, size INTEGER NOT NULL, json TEXT NOT NULL,
	min_ts TEXT NOT NULL, max_ts TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS raw_events_max_ts ON raw_events (max_ts);
CREATE INDEX IF NOT EXISTS raw_events_unarchived ON raw_events (seq) WHERE archived = 0;
CREATE TABLE IF NOT EXISTS raw_events_purged (id INTEGER PRIMARY KEY CHECK (id = 1), through TEXT NOT NULL);
`;

/** Idempotency keys per agent key, for 36 days (dedupe.ts). */
export const DEDUPE_SCHEMA = `
CREATE TABLE IF NOT EXISTS dedupe_keys (
	agent_key TEXT NOT NULL, key TEXT NOT NULL, event TEXT NOT NULL, expires_at INTEGER NOT NULL,
	PRIMARY KEY (agent_key, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedupe_keys_expiry ON dedupe_keys (expires_at);
`;

/** Costs of LLM calls from the model prices, and the calls no price covers (aggregate-rows.ts). */
export const MODEL_COSTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS model_costs (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, model TEXT NOT NULL, currency TEXT NOT NULL,
	amount TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (period, agent_key, model, currency));
CREATE INDEX IF NOT EXISTS model_costs_unflushed ON model_costs (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS unpriced (
	period TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, events INTEGER NOT NULL,
	input_tokens TEXT NOT NULL, output_tokens TEXT NOT NULL, cached_input_tokens TEXT NOT NULL,
	reasoning_tokens TEXT NOT NULL, version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (period, provider, model));
CREATE INDEX IF NOT EXISTS unpriced_unflushed ON unpriced (period) WHERE version > flushed_version;
`;

/** The plan of each period and the quantities of its metered sources (metric-rows.ts, parts/period-plans.ts). */
export const METRICS_SCHEMA = `
CREATE TABLE IF NOT EXISTS plan_periods (period TEXT PRIMARY KEY, plan TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
	period TEXT NOT NULL, agent_key TEXT NOT NULL, source TEXT NOT NULL, quantity TEXT NOT NULL,
	version INTEGER NOT NULL, flushed_version INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (period, agent_key, source));
CREATE INDEX IF NOT EXISTS metrics_unflushed ON metrics (period) WHERE version > flushed_version;
CREATE TABLE IF NOT EXISTS metric_values (
	period TEXT NOT NULL, source TEXT NOT NULL, value TEXT NOT NULL, agent_key TEXT NOT NULL,
	PRIMARY KEY (period, source, value));
`;

/** Alert rules and what they triggered, in a subscription's head (parts/alert-book.ts). */
export const ALERTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS alert_rules (
	id TEXT PRIMARY KEY, metric TEXT, threshold TEXT NOT NULL, block INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS alert_triggers (
	alert_id TEXT NOT NULL, period TEXT NOT NULL, triggered_at TEXT NOT NULL, value TEXT NOT NULL,
	flushed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (alert_id, period));
CREATE TABLE IF NOT EXISTS margin_alert_rules (id TEXT PRIMARY KEY, threshold TEXT NOT NULL, min_costs TEXT NOT NULL);
`;

/**
 * The subscription's invoicing threshold and, per period, what its threshold invoices billed, the next request's
 * number and the request waiting for its invoice (0: none); closed once the period has a regular invoice
 * (parts/thresholds.ts).
 */
export const THRESHOLDS_SCHEMA = `
CREATE TABLE IF NOT EXISTS invoicing_threshold (id INTEGER PRIMARY KEY CHECK (id = 1), threshold TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS threshold_periods (
	period TEXT PRIMARY KEY, billed TEXT NOT NULL DEFAULT '0', next_sequence INTEGER NOT NULL DEFAULT 1,
	pending INTEGER NOT NULL DEFAULT 0, closed INTEGER NOT NULL DEFAULT 0);
`;

/** Unbilled usage set aside for a subscription, and what it absorbed (set-aside.ts, parts/adoption.ts). */
export const ADOPTION_SCHEMA = `
CREATE TABLE IF NOT EXISTS set_aside (
	subscription_id TEXT NOT NULL, id TEXT NOT NULL, row TEXT NOT NULL, archived INTEGER NOT NULL,
	at INTEGER NOT NULL, PRIMARY KEY (subscription_id, id));
CREATE TABLE IF NOT EXISTS set_aside_for (subscription_id TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS absorbed (agent_key TEXT PRIMARY KEY, through TEXT NOT NULL);
`;

/** Budget holds and the settlements a shard owes its head (parts/reservations.ts). */
export const RESERVATIONS_SCHEMA = `
CREATE TABLE IF NOT EXISTS reservations (
	id TEXT PRIMARY KEY, agent_key TEXT NOT NULL, amount TEXT NOT NULL, currency TEXT NOT NULL, description TEXT,
	status TEXT NOT NULL, created_at TEXT NOT NULL, expires_at INTEGER NOT NULL, ended_at TEXT);
CREATE INDEX IF NOT EXISTS reservations_held ON reservations (expires_at) WHERE status = 'held';
CREATE INDEX IF NOT EXISTS reservations_expiry ON reservations (expires_at);
CREATE TABLE IF NOT EXISTS reservation_settlements (reservation_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS reservation_requests (
	request_key TEXT PRIMARY KEY, request_hash TEXT NOT NULL, reservation_id TEXT NOT NULL, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS reservation_requests_at ON reservation_requests (at);
`;

/** What every other shard last reported to the head (parts/shards.ts). */
export const SHARD_REPORTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS shard_reports (
	shard INTEGER NOT NULL, period TEXT NOT NULL, read_at INTEGER NOT NULL, usage TEXT NOT NULL, metrics TEXT NOT NULL,
	PRIMARY KEY (shard, period));
CREATE TABLE IF NOT EXISTS shard_costs (
	shard INTEGER NOT NULL, period TEXT NOT NULL, read_at INTEGER NOT NULL, costs TEXT NOT NULL,
	PRIMARY KEY (shard, period));
`;

/** What the first write creates (store.ts); later versions' tables are added by the same statement. */
export const STORE_SCHEMA = `${META}${HOLDINGS_SCHEMA}${RAW_EVENTS_SCHEMA}${DEDUPE_SCHEMA}${AGGREGATES}${MODEL_COSTS_SCHEMA}${METRICS_SCHEMA}${ALERTS_SCHEMA}${ADOPTION_SCHEMA}`;
