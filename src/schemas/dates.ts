import { z } from "@hono/zod-openapi";
import { isRealDate } from "../lib/date-range";

/** A `start_date`/`end_date` query value: an ISO 8601 date-time with an offset, or a bare `YYYY-MM-DD`. */
export const DateParam = z
	.string()
	.refine(isRealDate, "Must be an ISO 8601 date (YYYY-MM-DD) or date-time with an offset.")
	.openapi({ example: "2026-11-01" });
