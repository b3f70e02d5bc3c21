import { createRoute, z } from "@hono/zod-openapi";
import { json } from "./openapi";
import { newRouter } from "./router";

/**
 * GET /healthz: whether the Worker answers, for load balancers and uptime checks. No key and no rate limit (it is
 * mounted outside /v1, before any of /v1's middlewares), so the document marks it `security: []`.
 */
export const Health = z
	.object({ status: z.literal("ok").openapi({ description: "Always `ok` while the Worker answers." }) })
	.openapi("Health");

export const healthRoutes = newRouter();

healthRoutes.openapi(
	createRoute({
		method: "get",
		path: "/healthz",
		operationId: "getHealth",
		tags: ["Health"],
		summary: "Whether the service is up",
		security: [],
		responses: { 200: { description: "The service is up", ...json(Health) } },
	}),
	(c) => c.json({ status: "ok" as const }, 200),
);
