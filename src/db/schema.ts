// The D1 schema, one file per domain in db/schema/; drizzle.config.ts and every `db/schema` import read it here.
// Every tenant-owned table carries `environment` ("live" | "test"); see db/scope.ts.
// Money and metered sums are exact decimal strings (lib/decimal.ts), never REAL.
// Timestamps are ISO 8601 UTC strings with milliseconds, so they sort as text.

export * from "./schema/access";
export * from "./schema/alerts";
export * from "./schema/audit";
export * from "./schema/billing";
export * from "./schema/coupons";
export * from "./schema/credit-notes";
export * from "./schema/customers";
export * from "./schema/exchange-rates";
export * from "./schema/hierarchies";
export * from "./schema/model-prices";
export * from "./schema/stripe";
export * from "./schema/subscriptions";
export * from "./schema/usage";
export * from "./schema/webhooks";
