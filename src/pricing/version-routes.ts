/** New versions of a rate plan (docs/plan-versions.md); reading one is GET /v1/pricing/rate-plans/{id}?version=. */
import { createRoute } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { createPlanVersion } from "./plan-versions";
import { CreateRatePlan, RatePlan, RatePlanParams } from "./routes";

export const planVersionRoutes = apiRouter();

planVersionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/pricing/rate-plans/{rate_plan_id}/versions",
		operationId: "createRatePlanVersion",
		tags: ["Pricing"],
		summary: "Create a new version of a rate plan",
		description:
			"Takes the body of a plan create and answers the plan at its new version (same id, version + 1), which " +
			"new subscriptions take. Existing subscriptions keep their version until they change plan or are " +
			"migrated. The currency must stay the plan's (409).",
		request: { params: RatePlanParams, body: { required: true, ...json(CreateRatePlan) } },
		responses: {
			201: { description: "The rate plan at its new version", ...json(RatePlan) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").rate_plan_id;
		const plan = await createPlanVersion({ ...scopeOf(c), id, input: c.req.valid("json") });
		return c.json(plan, 201);
	},
);
