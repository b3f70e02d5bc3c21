import type { z } from "@hono/zod-openapi";

/** An OpenAPI request or response body of `application/json` with this schema. */
export const json = <T extends z.ZodType>(schema: T) => ({ content: { "application/json": { schema } } });
