import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { instantRange, periodsOverlapping } from "../lib/date-range";
import { Decimal } from "../lib/decimal";
import { validationError } from "../lib/errors";
import { decimalPlaces, isCurrencyCode, minorUnits } from "../lib/money";
import { periodOf } from "../lib/time";
import { DateParam } from "../schemas/dates";
import { moneyInput } from "../schemas/numbers";
import { pageQuery } from "../schemas/pages";
import { costRecordJson, createManualCost, findCostRecords, findUnpriced } from "./costs";

const Currency = z
	.string()
	.refine(isCurrencyCode, "Must be an ISO 4217 currency code in upper case.")
	.openapi({ example: "USD" });
const Period = z
	.string()
	.regex(/^\d{4}-(0[1-9]|1[0-2])$/, "Must be a billing period YYYY-MM.")
	.openapi({ example: "2026-11" });

const CostRecord = z
	.object({
		id: z.string().openapi({ example: "cost_01jd0000000000000000000000" }),
		agent_id: z.string().nullable(),
		customer_id: z.string().nullable(),
		cost_type: z.string(),
		model: z.string().nullable().openapi({
			description: "The model of LLM calls costed from the model prices (source model_prices); else null.",
			example: "gpt-4o",
		}),
		amount: z.number(),
		currency: z.string(),
		period: z.string(),
		source: z.enum(["events", "manual", "model_prices"]),
	})
	.openapi("CostRecord");

const CreateCost = z
	.strictObject({
		agent_id: z.string().min(1),
		cost_type: z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, "1–100 characters of A-Z a-z 0-9 . _ : -"),
		amount: moneyInput(),
		currency: Currency.optional(),
		period: Period,
		customer_id: z.string().min(1).optional(),
	})
	.superRefine((input, ctx) => {
		const currency = input.currency ?? "USD";
		if (decimalPlaces(input.amount) > minorUnits(currency)) {
			ctx.addIssue({
				code: "custom",
				path: ["amount"],
				message: `${currency} amounts have at most ${minorUnits(currency)} decimal places.`,
			});
		}
	})
	.openapi("CreateCost");

const CostQuery = z.strictObject({
	agent_id: z.string().optional(),
	customer_id: z.string().optional(),
	model: z.string().optional().openapi({ description: "Only records of LLM calls of this model." }),
	start_date: DateParam.optional(),
	end_date: DateParam.optional(),
	currency: Currency.default("USD"),
	...pageQuery,
});

export const costRoutes = apiRouter();

costRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/costs",
		operationId: "createCost",
		tags: ["Costs"],
		summary: "Record a cost by hand (source manual)",
		request: { body: { required: true, ...json(CreateCost) } },
		responses: {
			201: { description: "The cost record", ...json(CostRecord) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const record = await createManualCost({
			db: database(c.env.DB),
			scope: c.get("scope"),
			input: c.req.valid("json"),
		});
		return c.json(costRecordJson(record), 201);
	},
);

costRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/costs",
		operationId: "listCosts",
		tags: ["Costs"],
		summary: "Cost records whose period overlaps the date range, in one currency",
		request: { query: CostQuery },
		responses: {
			200: {
				description: "Matching cost records; total is the sum of all matches, count their number",
				...json(
					z.object({
						costs: z.array(CostRecord),
						total: z.number(),
						count: z.number().int(),
						currency: z.string(),
						limit: z.number().int(),
						offset: z.number().int(),
					}),
				),
			},
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		// Without dates, every period a cost record can name (0000-01 to 9999-12).
		const range = instantRange(query.start_date ?? "0000-01-01", query.end_date ?? "9999-12-31");
		if (range.start >= range.end)
			throw validationError("start_date", "start_date must not be after end_date.");
		const periods = periodsOverlapping(range);
		const records = periods
			? await findCostRecords(database(c.env.DB), c.get("scope"), {
					agentId: query.agent_id,
					customerId: query.customer_id,
					model: query.model,
					currency: query.currency,
					periods,
				})
			: [];
		return c.json(
			{
				costs: records.slice(query.offset, query.offset + query.limit).map(costRecordJson),
				total: Decimal.sum(records.map((r) => r.amount)).toNumber(),
				count: records.length,
				currency: query.currency,
				limit: query.limit,
				offset: query.offset,
			},
			200,
		);
	},
);

const UnpricedModel = z
	.object({
		provider: z.string().nullable().openapi({ description: "null when the events named no provider." }),
		model: z.string().openapi({ example: "my-fine-tune" }),
		events: z.number().int(),
		input_tokens: z.number(),
		output_tokens: z.number(),
		cached_input_tokens: z.number(),
		reasoning_tokens: z.number(),
	})
	.openapi("UnpricedModel");

costRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/costs/unpriced",
		operationId: "listUnpricedModels",
		tags: ["Costs"],
		summary: "LLM calls of a billing period that no model price covers, by provider and model",
		request: {
			query: z.strictObject({
				billing_period: Period.optional().openapi({ description: "Default: the current billing period." }),
			}),
		},
		responses: {
			200: {
				description: "Every (provider, model) with events of the period that have no price, and only those",
				...json(
					z.object({
						billing_period: z.string().openapi({ example: "2026-11" }),
						models: z.array(UnpricedModel),
					}),
				),
			},
			...errorResponses(400),
		},
	}),
	async (c) => {
		const period = c.req.valid("query").billing_period ?? periodOf(new Date().toISOString());
		const models = await findUnpriced(database(c.env.DB), c.get("scope"), period);
		return c.json({ billing_period: period, models }, 200);
	},
);
