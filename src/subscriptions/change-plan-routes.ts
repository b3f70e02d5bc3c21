/**
 * POST /v1/subscriptions/{id}/change-plan and POST /v1/pricing/rate-plans/{id}/migrate, its bulk form
 * (docs/plan-versions.md). Here rather than in pricing/: both write subscriptions, and pricing/ comes before them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { RatePlanParams } from "../pricing/routes";
import { changePlanNow } from "./change-now";
import { changePlan } from "./change-plan";
import { migratePlan } from "./migrate";
import { Subscription, SubscriptionParams } from "./routes";

export const ChangePlan = z
	.strictObject({
		rate_plan_id: z
			.string()
			.min(1)
			.optional()
			.openapi({ description: "The plan to move to; default the subscription's own plan." }),
		version: z
			.number()
			.int()
			.min(1)
			.optional()
			.openapi({ description: "The version of that plan; default its latest.", example: 2 }),
		at: z
			.enum(["now", "period_end"])
			.optional()
			.openapi({
				description:
					"When the change takes effect: period_end (default), the start of the next billing period; now, at " +
					"once, splitting the current period in parts each billed by its own plan.",
			}),
	})
	.openapi("ChangePlan", { example: { rate_plan_id: "plan_01jd0000000000000000000000", version: 2 } });

export const changePlanRoutes = apiRouter();

changePlanRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/subscriptions/{subscription_id}/change-plan",
		operationId: "changeSubscriptionPlan",
		tags: ["Subscriptions"],
		summary: "Move a subscription to another plan or version",
		description:
			"At period_end (default): from the next billing period on, shown as pending_plan_change (and " +
			"pending_rate_plan_id) until then; a later change replaces it, and changing back to the current plan and " +
			"version withdraws it. Now: the current period splits at this instant, any pending change is cleared, and " +
			"each part is billed by its own plan and version (base fees prorated by seconds) on the period's one " +
			"regular invoice. Emits subscription.updated. An unknown plan or version → 404; a plan in another " +
			"currency than the current one, a cancelled subscription, the plan and version it already has, or a " +
			"change now in a period that already has a regular invoice (a draft counts) → 409.",
		request: { params: SubscriptionParams, body: { required: false, ...json(ChangePlan) } },
		responses: {
			200: { description: "The subscription", ...json(Subscription) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const body = c.req.valid("json") as z.infer<typeof ChangePlan> | undefined;
		const change = body?.at === "now" ? changePlanNow : changePlan;
		const subscription = await change({
			env: c.env,
			...scopeOf(c),
			id: c.req.valid("param").subscription_id,
			input: body ?? {},
		});
		return c.json(subscription, 200);
	},
);

const Version = z.number().int().min(1);

export const MigratePlan = z
	.strictObject({
		from_version: Version.optional().openapi({
			description: "Move only subscriptions on this version; default every version before to_version.",
		}),
		to_version: Version.optional().openapi({ description: "The version to move to; default the latest." }),
		at: z
			.enum(["period_end"], { error: 'must be "period_end"' })
			.optional()
			.openapi({ description: "When the moves take effect: the start of the next billing period." }),
	})
	.openapi("MigratePlan", { example: { from_version: 1, to_version: 2 } });

const Migration = z
	.object({
		migrated: z.number().int().openapi({ description: "Subscriptions moved by this run.", example: 2 }),
		subscription_ids: z.array(z.string()).openapi({ example: ["sub_01jd0000000000000000000000"] }),
	})
	.openapi("PlanMigration");

changePlanRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/pricing/rate-plans/{rate_plan_id}/migrate",
		operationId: "migrateRatePlan",
		tags: ["Pricing"],
		summary: "Move a plan's subscriptions to another version",
		description:
			"A change-plan at period end of every active subscription of the plan on from_version (default: every " +
			"earlier version) to to_version (default: the latest). Subscriptions whose pending change is already the " +
			"target, or goes to another plan, are left alone, so a second run migrates 0. An unknown plan, " +
			"from_version or to_version → 404.",
		request: { params: RatePlanParams, body: { required: false, ...json(MigratePlan) } },
		responses: {
			200: { description: "What this run moved", ...json(Migration) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const body = c.req.valid("json") as z.infer<typeof MigratePlan> | undefined;
		const result = await migratePlan({
			env: c.env,
			...scopeOf(c),
			id: c.req.valid("param").rate_plan_id,
			input: body ?? {},
		});
		return c.json(result, 200);
	},
);
