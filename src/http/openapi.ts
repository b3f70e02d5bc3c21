import type { z } from "@hono/zod-openapi";

/*
 * Writing a route for /v1/openapi.json (test/node/openapi.test.ts names any operation that breaks this):
 * - createRoute({ operationId, tags, summary, ... }): operationId is verbNoun in camelCase and unique
 *   (listInvoices, getInvoice, createRatePlan, payInvoice, sendActionBatch); tags name the domain ("Invoices").
 * - Responses: the route's own statuses plus ...errorResponses(...) as usual. Do not declare X-Request-Id,
 *   X-RateLimit-*, Retry-After, WWW-Authenticate, Idempotent-Replayed or the Idempotency-Key parameter: they are
 *   added to every operation by http/openapi-document.ts, from what the middlewares do.
 * - Schemas: name timestamps `*_at` (or `timestamp`) and currencies `currency`/`*_currency` and they get their
 *   format and pattern; give `.openapi({ example })` to fields whose name says too little (a pattern, an id
 *   list, free text). Body examples are composed from those; Spectral checks each against its schema.
 */

/** An OpenAPI request or response body of `application/json` with this schema. */
export const json = <T extends z.ZodType>(schema: T) => ({ content: { "application/json": { schema } } });
