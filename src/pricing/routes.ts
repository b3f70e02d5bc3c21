import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { boundedNumber } from "../schemas/numbers";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { integerQuery } from "../schemas/query";
import { Charge, RatePlanInput } from "./charges";
import { getVersionedPlan, withVersions } from "./plan-versions";
import { archiveRatePlan, createRatePlan, listRatePlans, simulateRatePlan } from "./rate-plans";

const exampleCharges = [
	{
		metric: "tokens",
		description: "LLM tokens, the first 100,000 free",
		source: { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" },
		model: "per_unit",
		included_quantity: 100000,
		unit_price: 0.000002,
	},
	{
		metric: "api_calls",
		source: { kind: "action", type: "tool.call", aggregate: "count" },
		model: "tiered",
		tiers: [
			{ up_to: 1000, unit_price: 0.01 },
			{ up_to: null, unit_price: 0.005, flat_fee: 2 },
		],
	},
	{
		metric: "deal_value",
		source: { kind: "outcome", type: "deal.closed", aggregate: "sum" },
		model: "percentage",
		percent: 10,
	},
	{
		metric: "gpt4o_cost",
		description: "What gpt-4o calls cost, plus 25 %",
		source: { kind: "action", type: "llm.call", aggregate: "cost", filter: { model: "gpt-4o" } },
		model: "cost_plus",
		markup_percent: 25,
	},
];

export const CreateRatePlan = RatePlanInput.openapi("CreateRatePlan", {
	description:
		"A base fee plus charges. Prices take up to 12 decimal places; a plan never changes once created.",
	example: {
		name: "Agent Pro",
		description: "Usage-based plan for sales agents",
		currency: "USD",
		base_fee: 49,
		charges: exampleCharges as RatePlanInput["charges"],
	},
});

export const RatePlan = z
	.object({
		id: z.string().openapi({ example: "plan_01jd0000000000000000000000" }),
		name: z.string(),
		description: z.string().nullable(),
		currency: z.string().openapi({ example: "USD" }),
		base_fee: z
			.number()
			.openapi({ description: "Billed once per billing period, in major units.", example: 49 }),
		minimum_amount: z.number().openapi({
			description:
				"The least a billing period costs: below it, invoices and simulations end with a minimum_commitment top-up line.",
			example: 0,
		}),
		prorate: z.boolean().openapi({
			description:
				"Whether the base fee is billed in proportion to the time a subscription was active in the period.",
		}),
		charges: z.array(Charge.openapi("Charge")),
		status: z.enum(["active", "archived"]),
		version: z.number().int().openapi({
			description:
				"The version shown: 1 when created, + 1 with each new version (the latest unless ?version=).",
			example: 1,
		}),
		versions: z
			.array(
				z.object({
					version: z.number().int(),
					created_at: z.string(),
					subscriptions: z
						.number()
						.int()
						.openapi({ description: "Active subscriptions rated by this version in the current period." }),
				}),
			)
			.openapi({ description: "Every version of the plan, oldest first." }),
		created_at: z.string().openapi({ example: "2026-11-21T10:00:00.000Z" }),
	})
	.openapi("RatePlan");

/** zod records silently skip a "__proto__" key; an unknown usage key must be refused, not priced as absent. */
function refuseProtoKey(usage: unknown, ctx: z.core.$RefinementCtx): unknown {
	if (typeof usage === "object" && usage !== null && Object.hasOwn(usage, "__proto__")) {
		ctx.addIssue({ code: "custom", path: ["__proto__"], message: '"__proto__" is not a metric of any plan' });
	}
	return usage;
}

export const SimulatePricing = z
	.strictObject({
		rate_plan_id: z.string().min(1).optional().openapi({ description: "The plan to price with." }),
		subscription_id: z
			.string()
			.min(1)
			.optional()
			.openapi({
				description:
					"Instead of rate_plan_id: price with the plan of the subscription's current period and its " +
					"negotiated prices (price_overrides).",
			}),
		usage: z
			.preprocess(refuseProtoKey, z.record(z.string(), boundedNumber().min(0, "must be ≥ 0")))
			.openapi({ description: "Quantity per metric of the plan; metrics left out count as 0." }),
	})
	.superRefine((body, ctx) => {
		if ((body.rate_plan_id === undefined) === (body.subscription_id === undefined)) {
			ctx.addIssue({
				code: "custom",
				path: [body.rate_plan_id === undefined ? "rate_plan_id" : "subscription_id"],
				message: "give exactly one of rate_plan_id and subscription_id",
			});
		}
	})
	.openapi("SimulatePricing", {
		example: {
			rate_plan_id: "plan_01jd0000000000000000000000",
			usage: { tokens: 1234567, api_calls: 1500, deal_value: 1234.565, gpt4o_cost: 12.345 },
		},
	});

const RatedTier = z
	.object({
		up_to: z.number().nullable(),
		quantity: z.number(),
		amount: z.number().openapi({ description: "Exact; only the charge's amount is rounded." }),
	})
	.openapi("RatedTier");

const RatedCharge = z
	.object({
		metric: z.string().openapi({
			description:
				'A metric of the plan, "base_fee" for the base fee, "minimum_commitment" for the minimum\'s top-up, or "discount" for the discount of a subscription (a negative amount, after the top-up).',
		}),
		model: z.enum(["flat", "per_unit", "package", "tiered", "volume", "percentage", "cost_plus"]),
		quantity: z.number(),
		billable_quantity: z
			.number()
			.openapi({ description: "The quantity less the included quantity, at least 0." }),
		amount: z.number().openapi({ description: "Rounded half-up to the currency's minor unit." }),
		tiers: z.array(RatedTier).optional(),
	})
	.openapi("RatedCharge");

const Simulation = z
	.object({
		rate_plan_id: z.string(),
		subscription_id: z
			.string()
			.optional()
			.openapi({ description: "Present when the simulation priced a subscription's negotiated prices." }),
		currency: z.string(),
		charges: z.array(RatedCharge),
		total: z.number().openapi({ description: "The sum of the charge amounts." }),
	})
	.openapi("Simulation", {
		example: {
			rate_plan_id: "plan_01jd0000000000000000000000",
			currency: "USD",
			charges: [
				{ metric: "base_fee", model: "flat", quantity: 1, billable_quantity: 1, amount: 49 },
				{ metric: "tokens", model: "per_unit", quantity: 1234567, billable_quantity: 1134567, amount: 2.27 },
				{
					metric: "api_calls",
					model: "tiered",
					quantity: 1500,
					billable_quantity: 1500,
					amount: 14.5,
					tiers: [
						{ up_to: 1000, quantity: 1000, amount: 10 },
						{ up_to: null, quantity: 500, amount: 4.5 },
					],
				},
				{
					metric: "deal_value",
					model: "percentage",
					quantity: 1234.565,
					billable_quantity: 1234.565,
					amount: 123.46,
				},
				{
					metric: "gpt4o_cost",
					model: "cost_plus",
					quantity: 12.345,
					billable_quantity: 12.345,
					amount: 15.43,
				},
			],
			total: 204.66,
		},
	});

export const RatePlanParams = z.object({
	rate_plan_id: z
		.string()
		.openapi({ param: { name: "rate_plan_id", in: "path" }, example: "plan_01jd0000000000000000000000" }),
});

const VersionQuery = z.strictObject({
	version: integerQuery({ min: 1 }).optional().openapi({
		type: "integer",
		minimum: 1,
		description: "An earlier version of the plan; default the latest.",
	}),
});

export const pricingRoutes = apiRouter();

pricingRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/pricing/rate-plans",
		operationId: "createRatePlan",
		tags: ["Pricing"],
		summary: "Create a rate plan",
		request: { body: { required: true, ...json(CreateRatePlan) } },
		responses: { 201: { description: "The rate plan", ...json(RatePlan) }, ...errorResponses(...bodyErrors) },
	}),
	async (c) => {
		const scope = scopeOf(c);
		const plan = await createRatePlan({ ...scope, input: c.req.valid("json") });
		return c.json((await withVersions(scope.db, scope.scope, [plan]))[0], 201);
	},
);

pricingRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/pricing/rate-plans",
		operationId: "listRatePlans",
		tags: ["Pricing"],
		summary: "List rate plans, archived ones included",
		request: { query: PageQuery },
		responses: {
			200: { description: "Rate plans", ...json(pageSchema("rate_plans", RatePlan)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const scope = scopeOf(c);
		const { items, total } = await listRatePlans({ ...scope, ...query });
		return c.json(pageOf("rate_plans", await withVersions(scope.db, scope.scope, items), total, query), 200);
	},
);

pricingRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/pricing/rate-plans/{rate_plan_id}",
		operationId: "getRatePlan",
		tags: ["Pricing"],
		summary: "Get a rate plan",
		description: "The latest version, or with ?version= an earlier one (an unknown version → 404).",
		request: { params: RatePlanParams, query: VersionQuery },
		responses: {
			200: { description: "The rate plan", ...json(RatePlan) },
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").rate_plan_id;
		const { version } = c.req.valid("query");
		return c.json(await getVersionedPlan({ ...scopeOf(c), id, version }), 200);
	},
);

pricingRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "delete",
		path: "/pricing/rate-plans/{rate_plan_id}",
		operationId: "deleteRatePlan",
		tags: ["Pricing"],
		summary: "Archive a rate plan",
		description:
			"An archived plan can no longer be subscribed to; existing subscriptions keep it, and it can still be read and " +
			"simulated. Archiving an archived plan returns it unchanged.",
		request: { params: RatePlanParams },
		responses: { 200: { description: "The archived rate plan", ...json(RatePlan) }, ...errorResponses(404) },
	}),
	async (c) => {
		const id = c.req.valid("param").rate_plan_id;
		const scope = scopeOf(c);
		return c.json(
			(await withVersions(scope.db, scope.scope, [await archiveRatePlan({ ...scope, id })]))[0],
			200,
		);
	},
);

pricingRoutes.openapi(
	createRoute({
		access: READ,
		method: "post",
		path: "/pricing/simulate",
		operationId: "simulatePricing",
		tags: ["Pricing"],
		summary: "Price sample usage with a rate plan",
		description:
			"The base fee comes first when it is not zero, then every metric of the plan in plan order, then — when the " +
			"plan has a minimum_amount the rest falls short of — the minimum_commitment top-up; with a subscription_id, " +
			"its negotiated prices apply and, when a discount covers the current period, the discount line comes last, " +
			"as on the period's invoice. A usage key that is not a " +
			"metric of the plan is refused (400), and so is usage whose charge or total has more significant digits " +
			"than a JSON number carries exactly (up to 15 are always exact: 9,999,999,999,999.99 in a currency of 2 " +
			"decimals).",
		request: { body: { required: true, ...json(SimulatePricing) } },
		responses: {
			200: { description: "The charges and their total", ...json(Simulation) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const { rate_plan_id, subscription_id, usage } = c.req.valid("json");
		const simulation = await simulateRatePlan({
			...scopeOf(c),
			ratePlanId: rate_plan_id,
			subscriptionId: subscription_id,
			usage,
		});
		return c.json(simulation, 200);
	},
);
