import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { DomainError } from "../lib/errors";
import { currencyCode } from "../schemas/currency";
import { decimalInput } from "../schemas/numbers";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { tellAccumulatorsOfRate } from "./notify";
import { createExchangeRate, exchangeRateJson, listExchangeRates, rateInEffect } from "./rates";

const Currency = (example: string) => currencyCode().openapi({ example });
const Instant = z.iso.datetime({
	offset: true,
	error: "must be an ISO 8601 date-time with an offset, e.g. 2026-11-25T00:00:00Z",
});
const sameCurrencies = {
	message: "quote must differ from base",
	path: ["quote"],
};

const CreateExchangeRate = z
	.strictObject({
		base: Currency("USD"),
		quote: Currency("EUR"),
		rate: decimalInput()
			.refine((n) => n > 0, "must be > 0")
			.openapi({ description: "How many `quote` one `base` buys; > 0, at most 12 decimals.", example: 0.92 }),
		effective_at: Instant.optional().openapi({
			description: "From when the rate applies: default now; may be in the past or the future.",
			example: "2026-12-01T00:00:00Z",
		}),
	})
	.refine((body) => body.base !== body.quote, sameCurrencies)
	.openapi("CreateExchangeRate", { example: { base: "USD", quote: "EUR", rate: 0.92 } });

const ExchangeRate = z
	.object({
		id: z.string().openapi({ example: "xr_01jd0000000000000000000000" }),
		base: z.string().openapi({ example: "USD" }),
		quote: z.string().openapi({ example: "EUR" }),
		rate: z.number().openapi({ example: 0.92 }),
		effective_at: z.string().openapi({ example: "2026-12-01T00:00:00.000Z" }),
		created_at: z.string().openapi({ example: "2026-11-25T10:00:00.000Z" }),
	})
	.openapi("ExchangeRate");

const ExchangeRateQuery = z
	.strictObject({
		base: Currency("USD").optional(),
		quote: Currency("EUR").optional(),
		at: Instant.optional().openapi({
			description: "With base and quote: the instant to read the rate at (default now).",
			example: "2026-12-15T00:00:00Z",
		}),
		...pageQuery,
	})
	.refine((q) => q.base === undefined || q.base !== q.quote, sameCurrencies)
	.refine((q) => q.at === undefined || (q.base !== undefined && q.quote !== undefined), {
		message: "at needs both base and quote",
		path: ["at"],
	});

export const exchangeRateRoutes = apiRouter();

exchangeRateRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/exchange-rates",
		operationId: "createExchangeRate",
		tags: ["Exchange rates"],
		summary: "Add an exchange rate",
		description:
			"1 `base` = `rate` `quote` from `effective_at` on (default now; past or future). Invoices in another " +
			"currency than their plan's convert at the rate in effect when issued. Read-write and admin keys.",
		request: { body: { required: true, ...json(CreateExchangeRate) } },
		responses: {
			201: { description: "The rate, as created", ...json(ExchangeRate) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const { db, scope } = scopeOf(c);
		const rate = await createExchangeRate(db, scope, c.req.valid("json"));
		// In effect already: the accumulators comparing amounts by this pair use it now (notify.ts).
		if (rate.effective_at <= rate.created_at) {
			c.executionCtx.waitUntil(tellAccumulatorsOfRate(c.env, scope.environment, rate));
		}
		return c.json(exchangeRateJson(rate), 201);
	},
);

exchangeRateRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/exchange-rates",
		operationId: "getExchangeRates",
		tags: ["Exchange rates"],
		summary: "The rate in effect for a pair, or a list of every rate",
		description:
			"With `base` and `quote`: the pair's rate in effect at `at` (default now) — the one with the latest " +
			"`effective_at` at or before it — or 404 when none is. Otherwise a list, newest `effective_at` first " +
			"(filtered by `base` or `quote` when one is given).",
		request: { query: ExchangeRateQuery },
		responses: {
			200: {
				description: "The rate in effect, or a list of rates",
				...json(z.union([ExchangeRate, pageSchema("exchange_rates", ExchangeRate)])),
			},
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const db = database(c.env.DB);
		const scope = c.get("scope");
		if (query.base !== undefined && query.quote !== undefined) {
			const at = query.at === undefined ? new Date().toISOString() : new Date(query.at).toISOString();
			const rate = await rateInEffect(db, scope, { base: query.base, quote: query.quote }, at);
			if (rate === null) {
				throw new DomainError(
					"not_found",
					`No ${query.base}→${query.quote} exchange rate is in effect at ${at}.`,
				);
			}
			return c.json(exchangeRateJson(rate), 200);
		}
		const { rates, total } = await listExchangeRates(db, scope, query);
		return c.json(pageOf("exchange_rates", rates.map(exchangeRateJson), total, query), 200);
	},
);
