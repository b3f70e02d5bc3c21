import { createRoute, z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { BILLING_PERIOD_PATTERN, isFuturePeriod, lastDayOf } from "../billing-period/period";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, SDK_READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { isRealDay } from "../lib/date-range";
import { validationError } from "../lib/errors";
import { dayOf, nowIso, periodOf } from "../lib/time";
import { readUnbilledUsage } from "./unbilled";
import { readUsage } from "./usage";

const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;

const DateParam = z
	.string()
	.refine(
		(s) => (BARE_DATE.test(s) ? isRealDay(s) : z.iso.datetime({ offset: true }).safeParse(s).success),
		"must be a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset",
	);

/** The UTC day a bound falls on. Usage is kept per UTC day, so a date-time bound covers its whole day. */
const dayOfBound = (bound: string) => (BARE_DATE.test(bound) ? bound : dayOf(new Date(bound).toISOString()));

export const UsageQuery = z.strictObject({
	agent_key: z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -").optional(),
	subscription_id: z.string().min(1).optional(),
	billing_period: z
		.string()
		.regex(BILLING_PERIOD_PATTERN, "Must be a month written YYYY-MM, e.g. 2026-11.")
		.optional()
		.openapi({
			example: "2026-11",
			description: "The billing period to answer. Default: the month of start_date, else the current month.",
		}),
	start_date: DateParam.optional().openapi({
		description: "Filters the usage lines. Default: the first day of the billing period (UTC).",
	}),
	end_date: DateParam.optional().openapi({
		description: "Inclusive; filters the usage lines. Default: the last day of the billing period.",
	}),
});

export const UsageLine = z
	.object({
		kind: z.enum(["action", "outcome"]),
		type: z.string(),
		count: z.number().int(),
		value: z.number().nullable().openapi({ description: "Sum of outcome values; null for actions." }),
	})
	.openapi("UsageLine");

export const RatedCharge = z.object({
	metric: z.string(),
	model: z.enum(["flat", "per_unit", "package", "tiered", "volume", "percentage", "cost_plus"]),
	quantity: z.number(),
	billable_quantity: z.number(),
	amount: z.number(),
	tiers: z
		.array(z.object({ up_to: z.number().nullable(), quantity: z.number(), amount: z.number() }))
		.optional(),
	description: z.string().optional().openapi({
		description:
			'Only in a billing period split by plan changes "now": the part the charge is of, e.g. "Base fee (1–15 Nov, Growth v1)".',
	}),
});

const UsageReport = z
	.object({
		start_date: z.string().openapi({ format: "date", example: "2026-11-01" }),
		end_date: z.string().openapi({ format: "date", example: "2026-11-30" }),
		usage: z.array(UsageLine),
		subscription_id: z.string().optional(),
		rate_plan_id: z
			.string()
			.optional()
			.openapi({ description: "With subscription_id: the plan of the billing period." }),
		billing_period: z
			.string()
			.optional()
			.openapi({ description: "With subscription_id: the billing period the charges and total are of." }),
		currency: z.string().optional(),
		charges: z
			.array(RatedCharge)
			.optional()
			.openapi({
				description:
					"With subscription_id: the billing period's usage so far, priced like a simulation at the subscription's " +
					'negotiated prices, and last, when a coupon covers the period, its discount (metric "discount", a ' +
					"negative amount).",
			}),
		total: z.number().optional(),
	})
	.openapi("Usage");

/**
 * One billing period per answer (docs/metering.md#reading-usage): billing_period, else the month of start_date, else the current
 * month. The dates default to that period's bounds and only filter the usage lines; with a subscription they
 * must lie in the period, so its lines never stand next to another month's charges.
 */
function usageWindow(query: z.infer<typeof UsageQuery>) {
	const now = nowIso();
	const startDay = query.start_date === undefined ? undefined : dayOfBound(query.start_date);
	const period = query.billing_period ?? (startDay === undefined ? periodOf(now) : periodOf(startDay));
	if (query.billing_period !== undefined && isFuturePeriod(query.billing_period, new Date(now))) {
		throw validationError("billing_period", `${query.billing_period} has not begun yet.`);
	}
	const window = {
		period,
		startDay: startDay ?? `${period}-01`,
		endDay: query.end_date === undefined ? lastDayOf(period) : dayOfBound(query.end_date),
	};
	if (window.startDay > window.endDay) {
		throw validationError("start_date", "start_date must not be after end_date.");
	}
	if (query.subscription_id !== undefined) {
		const source = query.billing_period === undefined ? "the month of start_date" : "billing_period";
		for (const [name, day] of [
			["start_date", window.startDay],
			["end_date", window.endDay],
		] as const) {
			if (periodOf(day) !== period) {
				throw validationError(
					name,
					`${name} must lie in billing period ${period} (${source}); ask for one period at a time.`,
				);
			}
		}
	}
	return window;
}

export const usageRoutes = apiRouter();

usageRoutes.openapi(
	createRoute({
		access: SDK_READ,
		method: "get",
		path: "/usage",
		operationId: "getUsage",
		tags: ["Metering"],
		summary: "Read usage of an instance or a subscription, in real time",
		request: { query: UsageQuery },
		responses: { 200: { description: "Usage", ...json(UsageReport) }, ...errorResponses(400, 404) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		if (query.agent_key === undefined && query.subscription_id === undefined) {
			throw validationError("agent_key", "Give agent_key or subscription_id (or both).");
		}
		const { period, startDay, endDay } = usageWindow(query);
		const report = await readUsage({
			env: c.env,
			...scopeOf(c),
			agentKey: query.agent_key,
			subscriptionId: query.subscription_id,
			period,
			startDay,
			endDay,
		});
		return c.json(report, 200);
	},
);

const UnbilledQuery = z.strictObject({
	billing_period: z
		.string()
		.regex(BILLING_PERIOD_PATTERN, "Must be a month written YYYY-MM, e.g. 2026-11.")
		.optional()
		.openapi({ description: "Default: the current month.", example: "2026-11" }),
});

const UnbilledUsage = z
	.object({
		billing_period: z.string().openapi({ example: "2026-11" }),
		usage: z.array(
			z.object({
				agent_key: z.string(),
				kind: z.enum(["action", "outcome"]),
				type: z.string(),
				count: z.number().int(),
				value: z.number().nullable().openapi({ description: "Sum of outcome values; null for actions." }),
			}),
		),
	})
	.openapi("UnbilledUsage");

usageRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/usage/unbilled",
		operationId: "getUnbilledUsage",
		tags: ["Metering"],
		summary: "Usage outside every subscription: recorded, never billed",
		description:
			"Per instance, kind and type, for a billing period: events of instances that were in no active " +
			"subscription when they were received. Counted seconds after the events, once their accumulators flushed.",
		request: { query: UnbilledQuery },
		responses: { 200: { description: "Unbilled usage", ...json(UnbilledUsage) }, ...errorResponses(400) },
	}),
	async (c) => {
		const period = c.req.valid("query").billing_period ?? periodOf(nowIso());
		const usage = await readUnbilledUsage(c.env, c.get("scope"), period);
		return c.json({ billing_period: period, usage }, 200);
	},
);
