import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { isCurrencyCode } from "../lib/money";
import { moneyInput } from "../schemas/numbers";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { SubscriptionDiscount } from "../subscriptions/routes";
import { archiveCoupon, createCoupon, getCoupon, listCoupons } from "./coupons";
import { applyDiscount, getDiscount } from "./discounts";

const Duration = z.enum(["once", "repeating", "forever"]).openapi({
	description:
		"once: the billing period it is applied in; repeating: duration_in_periods periods from then; forever: every period.",
});

const CreateCoupon = z
	.strictObject({
		code: z
			.string()
			.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 characters of A-Z a-z 0-9 _ -")
			.openapi({ description: "Unique in the environment; what customers type.", example: "LAUNCH20" }),
		name: z.string().min(1).max(200).nullable().optional(),
		percent_off: moneyInput()
			.refine((n) => n > 0 && n <= 100, "must be more than 0 and at most 100")
			.optional()
			.openapi({ description: "A percentage of the invoice off (0 < p ≤ 100).", example: 20 }),
		amount_off: moneyInput()
			.refine((n) => n > 0, "must be more than 0")
			.optional()
			.openapi({ description: "An amount off each covered period, in `currency`.", example: 50 }),
		currency: z
			.string()
			.refine(isCurrencyCode, "must be an ISO 4217 currency code in upper case")
			.optional()
			.openapi({ description: "The currency of amount_off (required with it, refused without it)." }),
		duration: Duration,
		duration_in_periods: z
			.number()
			.int("must be an integer")
			.min(1, "must be between 1 and 120")
			.max(120, "must be between 1 and 120")
			.optional()
			.openapi({ description: "How many billing periods a repeating coupon covers (repeating only)." }),
		max_redemptions: z
			.number()
			.int("must be an integer")
			.min(1, "must be at least 1")
			.max(1e9, "must be at most 1000000000")
			.optional()
			.openapi({ description: "How many subscriptions may redeem it in all; absent: no limit." }),
		redeem_by: z.iso
			.datetime({ offset: true, error: "must be an ISO 8601 date-time with an offset" })
			.refine((s) => Date.parse(s) > Date.now(), "must be in the future")
			.optional()
			.openapi({ description: "The last instant it can be redeemed.", example: "2026-12-31T23:59:59Z" }),
	})
	.superRefine((body, ctx) => {
		const percent = body.percent_off !== undefined;
		const amount = body.amount_off !== undefined;
		if (percent === amount) {
			ctx.addIssue({
				code: "custom",
				path: [percent ? "amount_off" : "percent_off"],
				message: "give exactly one of percent_off and amount_off",
			});
		}
		if (amount && body.currency === undefined) {
			ctx.addIssue({ code: "custom", path: ["currency"], message: "is required with amount_off" });
		}
		if (!amount && body.currency !== undefined) {
			ctx.addIssue({ code: "custom", path: ["currency"], message: "is allowed only with amount_off" });
		}
		if (body.duration === "repeating" && body.duration_in_periods === undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["duration_in_periods"],
				message: "is required for a repeating coupon",
			});
		}
		if (body.duration !== "repeating" && body.duration_in_periods !== undefined) {
			ctx.addIssue({
				code: "custom",
				path: ["duration_in_periods"],
				message: "is allowed only for a repeating coupon",
			});
		}
	})
	.openapi("CreateCoupon", {
		example: {
			code: "LAUNCH20",
			name: "Launch offer",
			percent_off: 20,
			duration: "repeating",
			duration_in_periods: 3,
		},
	});

const Coupon = z
	.object({
		id: z.string().openapi({ example: "cpn_01jd0000000000000000000000" }),
		code: z.string(),
		name: z.string().nullable(),
		percent_off: z.number().nullable(),
		amount_off: z.number().nullable(),
		currency: z.string().nullable(),
		duration: Duration,
		duration_in_periods: z.number().int().nullable(),
		max_redemptions: z.number().int().nullable(),
		redeem_by: z.string().nullable(),
		times_redeemed: z.number().int().openapi({ description: "How many subscriptions redeemed it." }),
		status: z.enum(["active", "archived"]),
		created_at: z.string(),
	})
	.openapi("Coupon");

const ApplyDiscount = z
	.strictObject({
		coupon_id: z.string().min(1).optional(),
		code: z.string().min(1).max(64).optional(),
	})
	.superRefine((body, ctx) => {
		if ((body.coupon_id === undefined) === (body.code === undefined)) {
			ctx.addIssue({
				code: "custom",
				path: [body.coupon_id === undefined ? "coupon_id" : "code"],
				message: "give exactly one of coupon_id and code",
			});
		}
	})
	.openapi("ApplyDiscount", { example: { code: "LAUNCH20" } });

const CouponParams = z.object({
	coupon_id: z
		.string()
		.openapi({ param: { name: "coupon_id", in: "path" }, example: "cpn_01jd0000000000000000000000" }),
});

const SubscriptionParams = z.object({
	subscription_id: z
		.string()
		.openapi({ param: { name: "subscription_id", in: "path" }, example: "sub_01jd0000000000000000000000" }),
});

export const couponRoutes = apiRouter();

couponRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/coupons",
		operationId: "createCoupon",
		tags: ["Coupons"],
		summary: "Create a coupon",
		description: "409 when another coupon of the environment has the same code.",
		request: { body: { required: true, ...json(CreateCoupon) } },
		responses: { 201: { description: "The coupon", ...json(Coupon) }, ...errorResponses(...bodyErrors) },
	}),
	async (c) => c.json(await createCoupon({ ...scopeOf(c), input: c.req.valid("json") }), 201),
);

couponRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/coupons",
		operationId: "listCoupons",
		tags: ["Coupons"],
		summary: "List coupons",
		request: { query: PageQuery },
		responses: {
			200: { description: "Coupons, newest first", ...json(pageSchema("coupons", Coupon)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const page = c.req.valid("query");
		const { items, total } = await listCoupons({ ...scopeOf(c), ...page });
		return c.json(pageOf("coupons", items, total, page), 200);
	},
);

couponRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/coupons/{coupon_id}",
		operationId: "getCoupon",
		tags: ["Coupons"],
		summary: "Get a coupon",
		request: { params: CouponParams },
		responses: { 200: { description: "The coupon", ...json(Coupon) }, ...errorResponses(404) },
	}),
	async (c) => c.json(await getCoupon({ ...scopeOf(c), id: c.req.valid("param").coupon_id }), 200),
);

couponRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "delete",
		path: "/coupons/{coupon_id}",
		operationId: "archiveCoupon",
		tags: ["Coupons"],
		summary: "Archive a coupon",
		description:
			"It can no longer be redeemed; discounts already applied with it go on. Archiving an archived coupon " +
			"returns it unchanged.",
		request: { params: CouponParams },
		responses: { 200: { description: "The archived coupon", ...json(Coupon) }, ...errorResponses(404) },
	}),
	async (c) => c.json(await archiveCoupon({ ...scopeOf(c), id: c.req.valid("param").coupon_id }), 200),
);

couponRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/subscriptions/{subscription_id}/discounts",
		operationId: "applyDiscount",
		tags: ["Coupons"],
		summary: "Apply a coupon to a subscription from the current billing period",
		description:
			"409 when the coupon is archived, past redeem_by or redeemed max_redemptions times, when it takes an " +
			"amount off in another currency than the plan's, when the subscription is cancelled, or when it already " +
			"has a discount (one at a time). Unknown subscription, coupon id or code → 404.",
		request: { params: SubscriptionParams, body: { required: true, ...json(ApplyDiscount) } },
		responses: {
			201: { description: "The discount", ...json(SubscriptionDiscount) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const body = c.req.valid("json");
		const discount = await writeOnce(
			c,
			(mark) =>
				applyDiscount({
					env: c.env,
					...scopeOf(c),
					subscriptionId: c.req.valid("param").subscription_id,
					input: body.coupon_id !== undefined ? { coupon_id: body.coupon_id } : { code: body.code as string },
					mark,
				}),
			([id]) => getDiscount({ ...scopeOf(c), id: id as string }),
		);
		return c.json(discount, 201);
	},
);
