import { createRoute, z } from "@hono/zod-openapi";
import { BILLING_PERIOD_PATTERN } from "../billing-period/period";
import { findCostRecords } from "../costs/costs";
import { database } from "../db/client";
import { errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { instantRange, periodsStartingIn } from "../lib/date-range";
import { Decimal } from "../lib/decimal";
import { validationError } from "../lib/errors";
import { isCurrencyCode } from "../lib/money";
import { DateParam } from "../schemas/dates";
import { marginsOfPeriod } from "./margins";
import { revenueByParentAccount } from "./parent-revenue";
import { pnlBreakdown, pnlFigures, pnlJson, pnlSeries } from "./pnl";
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
		group_by: z.enum(["agent", "customer", "product", "parent_account"]).nullable(),
		breakdown: z.array(z.object({ id: z.string().nullable(), name: z.string(), revenue: z.number() })),
	})
	.openapi("RevenueReport");

const PnlFigures = {
	revenue: z.number(),
	costs: z.number(),
	margin: z.number().openapi({ description: "revenue − costs" }),
	margin_percent: z
		.number()
		.openapi({ description: "margin / revenue × 100, rounded half-up to 2 decimals; 0 when revenue is 0." }),
};

/** One entity's figures in a breakdown (null id: the unattributed row), under its component name. */
const breakdownRow = (name: string) =>
	z
		.object({
			id: z.string().nullable().openapi({ description: "null: the unattributed row." }),
			name: z.string(),
			...PnlFigures,
		})
		.openapi(name);

const PnlReport = z
	.object({
		...PnlFigures,
		currency: z.string(),
		start_date: z.string(),
		end_date: z.string(),
		group_by: z.enum(["agent", "customer", "product"]).optional(),
		breakdown: z
			.array(breakdownRow("PnlBreakdownRow"))
			.optional()
			.openapi({ description: "With group_by: one row per entity, summing exactly to the totals." }),
		series: z
			.array(
				z.object({ period: z.string().openapi({ example: "2026-11" }), ...PnlFigures }).openapi("PnlPeriod"),
			)
			.optional()
			.openapi({ description: "With interval=month: one row per month of the range, oldest first." }),
	})
	.openapi("PnlReport");

/** A monthly series is bounded: ten years of months at most. */
const MAX_SERIES_MONTHS = 120;

export const reportRoutes = apiRouter();

reportRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/reports/revenue",
		operationId: "getRevenueReport",
		tags: ["Reports"],
		summary: "Invoiced revenue of billing periods starting in the range, optionally broken down",
		request: {
			query: z.strictObject({
				...RangeQuery,
				group_by: z
					.enum(["agent", "customer", "product", "parent_account"])
					.optional()
					.openapi({ description: "parent_account: a child account's revenue counted under its parent." }),
			}),
		},
		responses: { 200: { description: "Revenue", ...json(RevenueReport) }, ...errorResponses(400) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const db = database(c.env.DB);
		const scope = c.get("scope");
		const lines = await revenueLines(db, scope, checkedRange(query), query.currency);
		const breakdown =
			query.group_by === "parent_account"
				? await revenueByParentAccount(db, scope, lines, query.currency)
				: query.group_by
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
		access: READ,
		method: "get",
		path: "/reports/pnl",
		operationId: "getPnlReport",
		tags: ["Reports"],
		summary:
			"Revenue, costs and margin of billing periods starting in the range, optionally by entity and month",
		request: {
			query: z.strictObject({
				...RangeQuery,
				group_by: z.enum(["agent", "customer", "product"]).optional(),
				interval: z.enum(["month"]).optional(),
			}),
		},
		responses: { 200: { description: "Profit and loss", ...json(PnlReport) }, ...errorResponses(400) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const db = database(c.env.DB);
		const scope = c.get("scope");
		const range = checkedRange(query);
		const periods = periodsStartingIn(range);
		if (query.interval !== undefined && periods !== null && monthsBetween(periods) > MAX_SERIES_MONTHS) {
			throw validationError("interval", `A monthly series covers at most ${MAX_SERIES_MONTHS} months.`);
		}
		const [lines, costRecords] = await Promise.all([
			revenueLines(db, scope, range, query.currency),
			periods ? findCostRecords(db, scope, { currency: query.currency, periods }) : [],
		]);
		const totals = pnlFigures(
			Decimal.sum(lines.map((l) => l.amount)),
			Decimal.sum(costRecords.map((r) => r.amount)),
		);
		const report: Record<string, unknown> = {
			...pnlJson(totals),
			currency: query.currency,
			start_date: query.start_date,
			end_date: query.end_date,
		};
		if (query.group_by !== undefined) {
			report.group_by = query.group_by;
			const rows = await pnlBreakdown(db, scope, lines, costRecords, query.group_by, query.currency);
			report.breakdown = rows.map(pnlJson);
		}
		if (query.interval !== undefined) report.series = pnlSeries(lines, costRecords, periods).map(pnlJson);
		return c.json(report as z.infer<typeof PnlReport>, 200);
	},
);

function monthsBetween(periods: { first: string; last: string }): number {
	const months = (period: string) => Number(period.slice(0, 4)) * 12 + Number(period.slice(5, 7));
	return months(periods.last) - months(periods.first) + 1;
}

export const MarginsQuery = z.strictObject({
	billing_period: z
		.string({
			error: (issue) =>
				issue.input === undefined
					? "Required: the billing period, written YYYY-MM (e.g. 2026-11)."
					: "Must be a billing period written YYYY-MM, e.g. 2026-11.",
		})
		.regex(BILLING_PERIOD_PATTERN, "Must be a billing period written YYYY-MM, e.g. 2026-11.")
		.openapi({ example: "2026-11", description: "The month: the current one (open, live) or a past one." }),
	group_by: z.enum(["agent", "customer", "model", "product"]).optional(),
	currency: Currency,
});

const MarginsReport = z
	.object({
		billing_period: z.string().openapi({ example: "2026-11" }),
		status: z.enum(["open", "closed"]).openapi({
			description:
				"open: the current month, revenue as its invoices would be if it closed now and costs recorded so far; " +
				"closed: a past month, as the P&L reports it.",
		}),
		currency: z.string(),
		...PnlFigures,
		breakdown: z
			.array(breakdownRow("MarginsBreakdownRow"))
			.openapi({ description: "With group_by: one row per entity, summing exactly to the totals; else []." }),
	})
	.openapi("MarginsReport");

reportRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/reports/margins",
		operationId: "getMarginsReport",
		tags: ["Reports"],
		summary: "Revenue, costs and margin of one billing period, live while it is open",
		description:
			"For the current month, revenue is what its invoices would be if it closed now (the invoices already " +
			"issued plus every subscription's upcoming invoice) and costs are those recorded so far; for a past " +
			"month, revenue and costs as GET /v1/reports/pnl reports them. group_by=model: costs by the model of " +
			"their LLM calls, revenue through charges whose filter names exactly one model.",
		request: { query: MarginsQuery },
		responses: { 200: { description: "Margins", ...json(MarginsReport) }, ...errorResponses(400) },
	}),
	async (c) => {
		const query = c.req.valid("query");
		const report = await marginsOfPeriod({
			env: c.env,
			scope: c.get("scope"),
			billingPeriod: query.billing_period,
			groupBy: query.group_by,
			currency: query.currency,
		});
		return c.json({ ...pnlJson(report), breakdown: report.breakdown.map(pnlJson) }, 200);
	},
);
