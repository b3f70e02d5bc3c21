import { createRoute, z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { database } from "../db/client";
import { MAX_SHARDS } from "../durable-objects/usage-accumulator/handle";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { PriceOverride, PriceOverrides } from "../pricing/price-overrides";
import { currencyCode } from "../schemas/currency";
import { moneyInput } from "../schemas/numbers";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { cancelSubscription } from "./cancel";
import { updateSubscription } from "./change";
import { createSubscription } from "./create";
import { getSubscription, listSubscriptions } from "./views";

const InstanceKeys = z
	.array(z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -"))
	.min(1)
	.max(100)
	.openapi({
		description: "Agent instance keys; unregistered keys are registered.",
		example: ["support-bot-eu-1"],
	});

export const SubscriptionDiscount = z
	.object({
		id: z.string().openapi({ example: "dsc_01jd0000000000000000000000" }),
		coupon_id: z.string().openapi({ example: "cpn_01jd0000000000000000000000" }),
		subscription_id: z.string(),
		start_period: z
			.string()
			.openapi({ description: "The first billing period it covers.", example: "2026-11" }),
		end_period: z.string().nullable().openapi({
			description: "The last billing period it covers (inclusive); null: every period from start_period on.",
			example: "2027-01",
		}),
		created_at: z.string(),
	})
	.openapi("Discount");

const OVERRIDES_DESCRIPTION =
	"Negotiated prices: each replaces the plan's pricing of one metric (model, its fields, and included_quantity " +
	"when given) for this subscription only; the metric's source stays the plan's. A metric the plan does not " +
	"have → 400.";

const PendingPlanChange = z
	.object({
		rate_plan_id: z.string(),
		version: z.number().int(),
		at: z.string().openapi({
			description: "When it takes effect: the first instant of the next billing period.",
			example: "2026-12-01T00:00:00.000Z",
		}),
	})
	.openapi("PendingPlanChange");

export const Subscription = z
	.object({
		id: z.string().openapi({ example: "sub_01jd0000000000000000000000" }),
		account_id: z.string(),
		rate_plan_id: z.string().openapi({ description: "The plan of the current billing period." }),
		rate_plan_version: z.number().int().openapi({
			description: "The version of rate_plan_id that rates the current billing period.",
			example: 1,
		}),
		pending_rate_plan_id: z.string().nullable().openapi({
			description:
				"The plan of pending_plan_change (which may be a new version of the same plan); null when none.",
		}),
		pending_plan_change: z.union([PendingPlanChange, z.null()]).openapi({
			description: "A change of plan or version from the next billing period on; null when none.",
		}),
		agent_instance_ids: z.array(z.string()),
		status: z.enum(["active", "cancelled"]),
		started_at: z.string(),
		cancelled_at: z.string().nullable(),
		cancel_at: z.string().nullable().openapi({
			description:
				"Set by a cancellation at period end: the first instant of the next period, when it will be cancelled.",
		}),
		shards: z
			.number()
			.int()
			.openapi({
				description:
					"How many usage accumulators count its events (1–64), fixed at creation: each takes about 1,000 " +
					"requests/s, so N shards take about N times as many single events per second.",
				example: 1,
			}),
		billing_currency: z.string().openapi({
			description:
				"The currency its invoices are in, fixed at creation. A plan priced in another currency is converted " +
				"per line at the exchange rate in effect when each invoice is issued.",
			example: "USD",
		}),
		price_overrides: z.array(PriceOverride).openapi({
			description: "Negotiated prices of the current billing period; [] when the plan's prices apply.",
		}),
		pending_price_overrides: z.array(PriceOverride).nullable().openapi({
			description:
				"Negotiated prices that take effect at the start of the next billing period; null when nothing is pending.",
		}),
		// A union, not .nullable(): that would make the registered Discount schema itself nullable.
		discount: z.union([SubscriptionDiscount, z.null()]).openapi({
			description: "The coupon applied to the current period (or later ones); null when none.",
		}),
		invoicing_threshold: z
			.number()
			.nullable()
			.openapi({
				description:
					"When the current period's usage not yet invoiced reaches this amount, a threshold invoice bills it at " +
					"once; null: no threshold invoices.",
				example: 500,
			}),
		created_at: z.string(),
	})
	.openapi("Subscription");

const SHARDS_DESCRIPTION =
	"Shards of a hot subscription: its events are counted by this many usage accumulators (an instance's " +
	"events always by the same one), which multiplies the single events per second it can take (about 1,000 " +
	"per shard). Reads, alerts and invoices merge the shards. Default 1; immutable after creation.";

const MAX_START_BACK_MS = 35 * 24 * 60 * 60 * 1000;

// docs/billing.md#subscription-lifecycle: a subscription may start up to 35 days back (events keep their timestamps that long), never in the future.
const StartedAt = z.iso
	.datetime({
		offset: true,
		error: "must be an ISO 8601 date-time with an offset, e.g. 2026-11-06T00:00:00Z",
	})
	.refine((s) => !(Date.parse(s) > Date.now()), "must not be in the future")
	.refine(
		(s) => !(Date.parse(s) < Date.now() - MAX_START_BACK_MS),
		"must not be more than 35 days in the past",
	)
	.openapi({
		description: "When the subscription starts; default now.",
		example: "2026-11-06T00:00:00Z",
	});

const CancelSubscription = z
	.strictObject({
		at_period_end: z
			.boolean()
			.optional()
			.openapi({
				description:
					"true: stay active until the current period ends, then be cancelled (subscription.cancelled is emitted " +
					"then). Default false: cancel now.",
			}),
	})
	.openapi("CancelSubscription");

const InvoicingThreshold = z.union([moneyInput().refine((n) => n > 0, "must be > 0"), z.null()]).openapi({
	description:
		"An amount > 0 in the subscription's currency, or null for none: when the current period's usage not yet " +
		"invoiced (charges after negotiated prices; no base fee, minimum, discount or credits) reaches it, a " +
		"threshold invoice bills that usage within seconds. Applies at once.",
	example: 500,
});

const CreateSubscription = z
	.strictObject({
		account_id: z.string().min(1),
		rate_plan_id: z.string().min(1),
		agent_instance_ids: InstanceKeys,
		started_at: StartedAt.optional(),
		adopt_unbilled_usage: z
			.boolean()
			.optional()
			.openapi({
				description:
					"true: the instances' unbilled usage since started_at (what they did outside every subscription, " +
					"listed by GET /v1/usage/unbilled) moves into this subscription and is billed with its period, " +
					"counted once. Default false: it stays unbilled.",
			}),
		shards: z
			.number()
			.int("must be an integer")
			.min(1, "must be between 1 and 64")
			.max(MAX_SHARDS, "must be between 1 and 64")
			.optional()
			.openapi({ description: SHARDS_DESCRIPTION, example: 4 }),
		price_overrides: PriceOverrides.optional().openapi({
			description: `${OVERRIDES_DESCRIPTION} They apply from the start.`,
		}),
		invoicing_threshold: InvoicingThreshold.optional(),
		billing_currency: currencyCode()
			.optional()
			.openapi({
				description:
					"The currency its invoices are in (ISO 4217); default the account's. Fixed here: a plan in another " +
					"currency is converted at the exchange rate in effect when each invoice is issued.",
				example: "EUR",
			}),
	})
	.openapi("CreateSubscription");

const UpdateSubscription = z
	.strictObject({
		rate_plan_id: z.string().min(1).optional(),
		agent_instance_ids: InstanceKeys.optional(),
		price_overrides: PriceOverrides.optional().openapi({
			description:
				`${OVERRIDES_DESCRIPTION} They apply from the next billing period (pending_price_overrides until ` +
				"then), to the next period's plan; [] returns to the plan's prices. A plan change without them starts " +
				"the new plan at its own prices.",
		}),
		invoicing_threshold: InvoicingThreshold.optional(),
		// Named so that the refusal says why: an instance's events and dedupe keys are in the shard its key hashes
		// to, so changing N would split them.
		shards: z
			.unknown()
			.refine(() => false, {
				error: "cannot be changed: it is fixed when the subscription is created (create a new subscription)",
			})
			.optional()
			.openapi({
				description:
					"Immutable: a subscription's shards are set at creation; any value here is refused (400).",
			}),
		billing_currency: z
			.unknown()
			.refine(() => false, {
				error: "cannot be changed: it is fixed when the subscription is created (create a new subscription)",
			})
			.optional()
			.openapi({ description: "Immutable: set at creation; any value here is refused (400)." }),
	})
	.openapi("UpdateSubscription");

const ListQuery = PageQuery.extend({
	account_id: z.string().optional(),
	status: z.enum(["active", "cancelled"]).optional(),
});

export const SubscriptionParams = z.object({ subscription_id: z.string() });

export const subscriptionRoutes = apiRouter();

subscriptionRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/subscriptions",
		operationId: "listSubscriptions",
		tags: ["Subscriptions"],
		summary: "List subscriptions",
		request: { query: ListQuery },
		responses: {
			200: { description: "Subscriptions", ...json(pageSchema("subscriptions", Subscription)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const { account_id, status, ...page } = c.req.valid("query");
		const { items, total } = await listSubscriptions({
			...scopeOf(c),
			filters: { account_id, status },
			...page,
		});
		return c.json(pageOf("subscriptions", items, total, page), 200);
	},
);

subscriptionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/subscriptions",
		operationId: "createSubscription",
		tags: ["Subscriptions"],
		summary: "Subscribe an account to a rate plan for some agent instances",
		description:
			"Emits subscription.created. 409 when the plan is archived, or an " +
			"instance is already in another active subscription, or `started_at` is before an instance left another " +
			"subscription (an instance is in one subscription at a time). `shards` (1–64, default 1) is fixed here.",
		request: { body: { required: true, ...json(CreateSubscription) } },
		responses: {
			201: { description: "The subscription", ...json(Subscription) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const db = database(c.env.DB);
		const subscription = await createSubscription({
			env: c.env,
			db,
			scope: c.get("scope"),
			input: c.req.valid("json"),
		});
		return c.json(subscription, 201);
	},
);

subscriptionRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/subscriptions/{subscription_id}",
		operationId: "getSubscription",
		tags: ["Subscriptions"],
		summary: "Get a subscription",
		request: { params: SubscriptionParams },
		responses: { 200: { description: "The subscription", ...json(Subscription) }, ...errorResponses(404) },
	}),
	async (c) => {
		const id = c.req.valid("param").subscription_id;
		return c.json(await getSubscription({ ...scopeOf(c), id }), 200);
	},
);

subscriptionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "patch",
		path: "/subscriptions/{subscription_id}",
		operationId: "updateSubscription",
		tags: ["Subscriptions"],
		summary: "Change a subscription's instances, or its plan from the next billing period",
		description:
			"Emits subscription.updated. Instance changes apply to events received from then on; a plan change shows as " +
			"pending_rate_plan_id until the next billing period starts. `shards` is immutable: sending it is a 400 " +
			"validation_error.",
		request: { params: SubscriptionParams, body: { required: true, ...json(UpdateSubscription) } },
		responses: {
			200: { description: "The subscription", ...json(Subscription) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const subscription = await updateSubscription({
			env: c.env,
			...scopeOf(c),
			id: c.req.valid("param").subscription_id,
			input: c.req.valid("json"),
		});
		return c.json(subscription, 200);
	},
);

subscriptionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/subscriptions/{subscription_id}/cancel",
		operationId: "cancelSubscription",
		tags: ["Subscriptions"],
		summary: "Cancel a subscription, now or at the end of its period",
		description:
			"Now: emits subscription.cancelled. With at_period_end: stays active with cancel_at and emits " +
			"subscription.updated; it is cancelled at cancel_at, emitting subscription.cancelled then. Cancelling a " +
			"cancelled subscription, or scheduling a scheduled one again → 409.",
		request: { params: SubscriptionParams, body: { required: false, ...json(CancelSubscription) } },
		responses: {
			200: { description: "The cancelled (or scheduled) subscription", ...json(Subscription) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const body = c.req.valid("json") as z.infer<typeof CancelSubscription> | undefined;
		const subscription = await cancelSubscription({
			env: c.env,
			...scopeOf(c),
			id: c.req.valid("param").subscription_id,
			atPeriodEnd: body?.at_period_end ?? false,
		});
		return c.json(subscription, 200);
	},
);
