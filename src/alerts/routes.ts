import { createRoute, z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, SDK_READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { decimalPlaces } from "../lib/money";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { createAlert, deleteAlert, getAlert, listAlerts } from "./alerts";
import { entitlementOf } from "./entitlements";

const MARGIN_THRESHOLD = { min: -10_000, max: 100 };

const CreateAlert = z
	.strictObject({
		subscription_id: z.string().min(1),
		type: z
			.enum(["usage", "margin"])
			.optional()
			.openapi({
				description:
					"usage (the default): a metric's quantity or the amount so far reaching the threshold; margin: the " +
					"subscription's live margin percent falling below the threshold.",
			}),
		metric: z
			.string()
			.regex(/^[a-z0-9_]{1,64}$/, "must be a metric of the subscription's plan")
			.nullable()
			.optional()
			.openapi({
				description:
					"Usage alerts: a metric of the subscription's plan; absent or null: the period's total amount. " +
					"Not allowed for margin alerts.",
			}),
		threshold: z
			.number()
			.min(-1e15)
			.max(1e15)
			.refine((n) => decimalPlaces(n) <= 12, "must have at most 12 decimal places")
			.openapi({
				description:
					"Usage alerts: the metric's quantity, or the amount in the billing currency (> 0). Margin alerts: a " +
					"margin percent from -10000 to 100.",
				example: 800,
			}),
		min_costs: z
			.number()
			.min(0)
			.max(1e15)
			.refine((n) => decimalPlaces(n) <= 12, "must have at most 12 decimal places")
			.optional()
			.openapi({
				description:
					"Margin alerts only: the period's costs must exceed this amount (default 0) before the margin is judged.",
			}),
		name: z.string().min(1).max(200).nullable().optional(),
		block: z
			.boolean()
			.optional()
			.openapi({
				description:
					"Usage alerts: once triggered, entitlements answer allowed: false until the period ends. Not allowed " +
					"for margin alerts.",
			}),
	})
	.superRefine((input, ctx) => {
		const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
		if (input.type === "margin") {
			if (input.metric !== undefined) issue("metric", "is not allowed for margin alerts");
			if (input.block !== undefined) issue("block", "is not allowed for margin alerts");
			if (input.threshold < MARGIN_THRESHOLD.min || input.threshold > MARGIN_THRESHOLD.max) {
				issue("threshold", "must be a margin percent from -10000 to 100 for margin alerts");
			}
			return;
		}
		if (input.threshold <= 0) issue("threshold", "must be greater than 0");
		if (input.min_costs !== undefined) issue("min_costs", "is allowed only for margin alerts");
	})
	.openapi("CreateAlert", {
		example: { subscription_id: "sub_01jd0000000000000000000000", threshold: 800, name: "80% of budget" },
	});

export const Alert = z
	.object({
		id: z.string().openapi({ example: "alr_01jd0000000000000000000000" }),
		subscription_id: z.string(),
		account_id: z.string(),
		type: z.enum(["usage", "margin"]),
		metric: z.string().nullable(),
		threshold: z
			.number()
			.openapi({ description: "A quantity or amount (usage), a margin percent (margin)." }),
		min_costs: z.number().optional().openapi({
			description: "Margin alerts: the costs the period must exceed before the margin is judged.",
		}),
		name: z.string().nullable(),
		block: z.boolean(),
		status: z.enum(["armed", "triggered"]).openapi({ description: "In the current billing period." }),
		triggered_at: z.string().nullable(),
		billing_period: z.string().openapi({ example: "2026-11", description: "The current billing period." }),
		created_at: z.string(),
	})
	.openapi("Alert");

const ListAlertsQuery = PageQuery.extend({ subscription_id: z.string().min(1).optional() });
const AlertParams = z.object({
	alert_id: z
		.string()
		.openapi({ param: { name: "alert_id", in: "path" }, example: "alr_01jd0000000000000000000000" }),
});

export const EntitlementQuery = z.strictObject({
	agent_key: z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -"),
});

const Entitlement = z
	.object({
		agent_key: z.string(),
		subscription_id: z.string().nullable(),
		allowed: z.boolean(),
		blocked_by: z.array(z.string()).openapi({ description: "The triggered block alerts." }),
		budget: z
			.object({
				alert_id: z.string(),
				threshold: z.number(),
				spent: z.number().openapi({ description: "The period's total amount so far, base fee included." }),
				held: z.number().openapi({ description: "Active reservations (POST /v1/reservations)." }),
				available: z.number().openapi({ description: "threshold − spent − held; allowed is false at ≤ 0." }),
			})
			.nullable()
			.openapi({
				description:
					"The tightest block alert on the total amount (least available), or null when the subscription has none.",
			}),
	})
	.openapi("Entitlement");

export const alertRoutes = apiRouter();

alertRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/alerts",
		operationId: "createAlert",
		tags: ["Alerts"],
		summary: "Create an alert, a budget or a margin alert on a subscription",
		description:
			"Evaluated on ingest: the event that takes the current period's value (the metric's quantity, or the total " +
			"amount) to or over the threshold triggers it and emits one alert.triggered; it re-arms each period. A " +
			"margin alert triggers when the period's costs exceed min_costs and its live margin percent (revenue so " +
			"far as GET /v1/usage rates it, minus costs) is below the threshold; revenue 0 with costs counts as below.",
		request: { body: { required: true, ...json(CreateAlert) } },
		responses: { 201: { description: "The alert", ...json(Alert) }, ...errorResponses(...bodyErrors, 404) },
	}),
	async (c) => {
		const alert = await createAlert({
			env: c.env,
			...scopeOf(c),
			input: c.req.valid("json"),
		});
		return c.json(alert, 201);
	},
);

alertRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/alerts",
		operationId: "listAlerts",
		tags: ["Alerts"],
		summary: "List alerts",
		request: { query: ListAlertsQuery },
		responses: {
			200: { description: "Alerts", ...json(pageSchema("alerts", Alert)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const { subscription_id, ...page } = c.req.valid("query");
		const { items, total } = await listAlerts({
			...scopeOf(c),
			subscriptionId: subscription_id,
			...page,
		});
		return c.json(pageOf("alerts", items, total, page), 200);
	},
);

alertRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/alerts/{alert_id}",
		operationId: "getAlert",
		tags: ["Alerts"],
		summary: "Get an alert",
		request: { params: AlertParams },
		responses: { 200: { description: "The alert", ...json(Alert) }, ...errorResponses(404) },
	}),
	async (c) => {
		const id = c.req.valid("param").alert_id;
		return c.json(await getAlert({ ...scopeOf(c), id }), 200);
	},
);

alertRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "delete",
		path: "/alerts/{alert_id}",
		operationId: "deleteAlert",
		tags: ["Alerts"],
		summary: "Delete an alert",
		request: { params: AlertParams },
		responses: { 204: { description: "Deleted" }, ...errorResponses(404) },
	}),
	async (c) => {
		const id = c.req.valid("param").alert_id;
		await deleteAlert({ env: c.env, ...scopeOf(c), id });
		return c.body(null, 204);
	},
);

alertRoutes.openapi(
	createRoute({
		access: SDK_READ,
		method: "get",
		path: "/entitlements",
		operationId: "getEntitlements",
		tags: ["Alerts"],
		summary: "May this agent instance go on?",
		description:
			"allowed is false while a block alert of the instance's subscription is triggered in the current period, " +
			"or while the tightest budget has nothing available once spent and held. " +
			"For agents to ask before expensive work (SDK keys allowed); events are never refused for it.",
		request: { query: EntitlementQuery },
		responses: { 200: { description: "The entitlement", ...json(Entitlement) }, ...errorResponses(400) },
	}),
	async (c) => {
		const { agent_key } = c.req.valid("query");
		return c.json(await entitlementOf({ env: c.env, scope: c.get("scope"), agentKey: agent_key }), 200);
	},
);
