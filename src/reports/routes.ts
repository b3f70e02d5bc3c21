import { createRoute, z } from "@hono/zod-openapi";
import { findCostRecords } from "../costs/costs";
import { database } from "../db/client";
import { errorResponses, validationError } from "../http/errors";
import { newRouter } from "../http/router";
import { DateParam, instantRange, periodsStartingIn } from "../lib/date-range";
import { Decimal } from "../lib/decimal";
import { isCurrencyCode } from "../lib/money";
import { revenueBreakdown, revenueLines } from "./revenue";

const Currency = z
	.string()
	.refine(isCurrencyCode, "Must be an ISO 4217 currency code in upper case.")
	.default("USD")
	.openapi({ example: "USD" });

const RangeQuery = {
	start_date: DateParam.openapi({ description: "First day (or instant) of the range, inclusive." }),
	end_date: DateParam.openapi({ description: "Last day (or instant) of the range, inclusive." }),
	currency: Currency,
};

function checkedRange(query: { start_date: string; end_date: string }) {
	const range = instantRange(query.start_date, query.end_date);
	if (range.start >= range.end) throw validationError("start_date", "start_date must not be after end_date.");
	return range;
}

const RevenueReport = z
	.object({
		revenue: z.number(),
		currency: z.string(),
		start_date: z.string(),
		end_date: z.string(),
		group_by: z.enum(["agent", "customer", "product"]).nullable(),
		breakdown: z.array(z.object({ id: z.string().nullable(), name: z.string(), revenue: z.number() })),
	})
	.openapi("RevenueReport");

const PnlReport = z
	.object({
		revenue: z.number(),
		costs: z.number(),
		margin: z.number(),
		margin_percent: z.number(),
		currency: z.string(),
		start_date: z.string(),
		end_date: z.string(),
	})
	.openapi("PnlReport");

const json = <T extends z.ZodType>(schema: T) => ({ content: { "application/json": { schema } } });

export const reportRoutes = newRouter();

reportRoutes.openapi(
	createRoute({
		method: "get",
		path: "/reports/revenue",
		operationId: "getRevenueReport",
		tags: ["Reports"],
		summary: "Invoiced revenue of billing periods starting in the range, optionally broken down",
		request: {
			query: z.strictObject({ ...RangeQuery, group_by: z.enum(["agent", "customer", "product"]).optional() }),
		},
		responses: { 200: { description: "Revenue", ...json(RevenueReport) }, ...errorResponses(400) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const db = database(c.env.DB);
		const scope = c.get("scope");
		const lines = await revenueLines(db, scope, checkedRange(query), query.currency);
		const breakdown = query.group_by
			? await revenueBreakdown(db, scope, lines, query.group_by, query.currency)
			: [];
		return c.json(
			{
				revenue: Decimal.sum(lines.map((l) => l.amount)).toNumber(),
				currency: query.currency,
				start_date: query.start_date,
				end_date: query.end_date,
				group_by: query.group_by ?? null,
				breakdown: breakdown.map((item) => ({ ...item, revenue: item.revenue.toNumber() })),
			},
			200,
		);
	},
);

reportRoutes.openapi(
	createRoute({
		method: "get",
		path: "/reports/pnl",
		operationId: "getPnlReport",
		tags: ["Reports"],
		summary: "Revenue, costs and margin of billing periods starting in the range",
		request: { query: z.strictObject(RangeQuery) },
		responses: { 200: { description: "Profit and loss", ...json(PnlReport) }, ...errorResponses(400) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const db = database(c.env.DB);
		const scope = c.get("scope");
		const range = checkedRange(query);
		const periods = periodsStartingIn(range);
		const [lines, costRecords] = await Promise.all([
			revenueLines(db, scope, range, query.currency),
			periods ? findCostRecords(db, scope, { currency: query.currency, periods }) : [],
		]);
		const revenue = Decimal.sum(lines.map((l) => l.amount));
		const costs = Decimal.sum(costRecords.map((r) => r.amount));
		const margin = revenue.sub(costs);
		const marginPercent = revenue.isZero()
			? Decimal.ZERO
			: margin.mul(Decimal.from(100)).divRoundHalfUp(revenue, 2);
		return c.json(
			{
				revenue: revenue.toNumber(),
				costs: costs.toNumber(),
				margin: margin.toNumber(),
				margin_percent: marginPercent.toNumber(),
				currency: query.currency,
				start_date: query.start_date,
				end_date: query.end_date,
			},
			200,
		);
	},
);
