import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { isCurrencyCode } from "../lib/money";
import { modelPriceJson } from "../model-costs/prices";
import { moneyInput } from "../schemas/numbers";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { createCustomPrice, deleteCustomPrice, listModelPrices } from "./custom-prices";
import { repriceAccumulators } from "./reprice";

const Provider = z
	.string()
	.regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, "must be a lower-case provider id: 1–100 characters of a-z 0-9 . _ -")
	.openapi({ example: "openai" });
const Model = z
	.string()
	.regex(
		/^[a-z0-9][a-z0-9._:/-]{0,199}$/,
		"must be a lower-case model id as the provider writes it: 1–200 characters of a-z 0-9 . _ : / -",
	)
	.openapi({ example: "gpt-4o" });
const Instant = z.iso.datetime({
	offset: true,
	error: "must be an ISO 8601 date-time with an offset, e.g. 2026-11-25T00:00:00Z",
});

const rate = (description: string) => moneyInput().optional().openapi({ description, example: 2.5 });

const CreateModelPrice = z
	.strictObject({
		provider: Provider,
		model: Model,
		currency: z
			.string()
			.refine(isCurrencyCode, "must be an ISO 4217 currency code in upper case")
			.optional()
			.openapi({ example: "USD" }),
		input_per_million: rate("Price of a million uncached input tokens; default 0."),
		output_per_million: rate("Price of a million output tokens; default 0."),
		cached_input_per_million: rate("Price of a million cached input tokens; default the input price."),
		reasoning_per_million: rate("Price of a million reasoning tokens; default the output price."),
		per_request: rate("Price of each call on top of its tokens; default 0."),
		effective_from: Instant.optional().openapi({
			description:
				"From when the price applies: default now; may be in the future, at most 35 days in the past.",
			example: "2026-11-25T00:00:00Z",
		}),
	})
	.openapi("CreateModelPrice", {
		example: {
			provider: "openai",
			model: "gpt-4o",
			input_per_million: 2,
			output_per_million: 8,
			effective_from: "2026-12-01T00:00:00Z",
		},
	});

const ModelPrice = z
	.object({
		id: z.string().openapi({ example: "mpr_01jd0000000000000000000000" }),
		provider: z.string().openapi({ example: "openai" }),
		model: z.string().openapi({ example: "gpt-4o" }),
		currency: z.string(),
		input_per_million: z.number(),
		output_per_million: z.number(),
		cached_input_per_million: z.number(),
		reasoning_per_million: z.number(),
		per_request: z.number(),
		effective_from: z.string().openapi({ example: "2026-11-25T00:00:00.000Z" }),
		origin: z.enum(["catalog", "custom"]).openapi({
			description:
				"catalog: ships with the service, the same in every environment; custom: this environment's.",
		}),
		created_at: z.string().openapi({ example: "2026-11-25T10:00:00.000Z" }),
	})
	.openapi("ModelPrice");

const ModelPriceQuery = z.strictObject({
	provider: z.string().optional().openapi({ example: "openai" }),
	model: z.string().optional().openapi({ example: "gpt-4o" }),
	origin: z.enum(["catalog", "custom"]).optional(),
	at: Instant.optional().openapi({
		description:
			"Only the price in effect at this instant for each (provider, model): the environment's custom price with " +
			"the latest effective_from at or before it, else the catalog's.",
		example: "2026-11-25T00:00:00Z",
	}),
	...pageQuery,
});

const ModelPriceParams = z.object({
	model_price_id: z.string().openapi({
		param: { name: "model_price_id", in: "path" },
		example: "mpr_01jd0000000000000000000000",
	}),
});

export const modelPriceRoutes = apiRouter();

modelPriceRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/model-prices",
		operationId: "createModelPrice",
		tags: ["Model prices"],
		summary: "Add a custom model price to this environment",
		description:
			"A negotiated rate, a model the catalog lacks, or a price change from a given date. Omitted rates: cached " +
			"input at the input price, reasoning at the output price, the others 0. Read-write and admin keys.",
		request: { body: { required: true, ...json(CreateModelPrice) } },
		responses: {
			201: { description: "The custom price", ...json(ModelPrice) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const price = await createCustomPrice({
			...scopeOf(c),
			input: c.req.valid("json"),
		});
		c.executionCtx.waitUntil(repriceAccumulators(c.env, c.get("scope").environment, price.effective_from));
		return c.json(modelPriceJson(price), 201);
	},
);

modelPriceRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/model-prices",
		operationId: "listModelPrices",
		tags: ["Model prices"],
		summary: "List the catalog's and this environment's model prices",
		request: { query: ModelPriceQuery },
		responses: {
			200: { description: "Model prices, newest first", ...json(pageSchema("model_prices", ModelPrice)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const prices = await listModelPrices(database(c.env.DB), c.get("scope"), query);
		const page = prices.slice(query.offset, query.offset + query.limit).map(modelPriceJson);
		return c.json(pageOf("model_prices", page, prices.length, query), 200);
	},
);

modelPriceRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "delete",
		path: "/model-prices/{model_price_id}",
		operationId: "deleteModelPrice",
		tags: ["Model prices"],
		summary: "Delete a custom model price",
		description:
			"Catalog prices cannot be deleted (409); add a custom price to override one. Read-write and admin keys.",
		request: { params: ModelPriceParams },
		responses: {
			204: { description: "Deleted" },
			...errorResponses(404, 409),
		},
	}),
	async (c) => {
		const { effectiveFrom } = await deleteCustomPrice({
			...scopeOf(c),
			id: c.req.valid("param").model_price_id,
		});
		c.executionCtx.waitUntil(repriceAccumulators(c.env, c.get("scope").environment, effectiveFrom));
		return c.body(null, 204);
	},
);
