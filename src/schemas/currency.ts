import { z } from "@hono/zod-openapi";
import { isCurrencyCode } from "../lib/money";

/** An ISO 4217 code in upper case, as every currency field and parameter takes it (docs/currencies.md). */
export const currencyCode = () =>
	z.string().refine(isCurrencyCode, "must be an ISO 4217 currency code in upper case");
