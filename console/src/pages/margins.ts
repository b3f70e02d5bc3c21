/**
 * Margins (CONTRACT §21): revenue, costs and margin by agent, customer or product for a date range, with the
 * monthly series as a chart (GET /v1/reports/pnl?group_by=&interval=month). Every figure is one the API returned.
 */
import { barChart, lineChart } from "../charts";
import { hashOf, type PageContext } from "../context";
import { type DateRange, rangeFrom, rangeProblem } from "../dates";
import { fill, h } from "../dom";
import { belowZero, money, percent } from "../format";
import { rangeForm } from "../range-form";
import type { MarginRow, PnlReport } from "../types";
import { field, fillWhenReady, ident, section, table } from "../ui";
import { unattributedNote } from "./overview";

const GROUPS = [
	["agent", "agent"],
	["customer", "customer"],
	["product", "product (rate plan)"],
] as const;
type Group = (typeof GROUPS)[number][0];

export async function marginsPage(ctx: PageContext): Promise<void> {
	const range = rangeFrom(ctx.query);
	const group: Group = GROUPS.find(([g]) => g === ctx.query.get("group_by"))?.[0] ?? "agent";
	const form = rangeForm(ctx, "/margins", range, { group_by: group });
	const picker = h(
		"select",
		{ name: "group_by" },
		GROUPS.map(([value, label]) => h("option", { value, selected: value === group }, label)),
	);
	picker.addEventListener("change", () =>
		ctx.go(
			hashOf("/margins", {
				start: range.start,
				end: range.end,
				currency: range.currency,
				group_by: picker.value,
			}),
		),
	);
	const controls = h("div", { class: "inline-form" }, field("Margins by", picker));
	if (rangeProblem(range)) {
		fill(ctx.view, h("h1", null, "Margins"), form);
		return;
	}
	const slot = h("div", { "data-margins": group });
	fill(ctx.view, h("h1", null, "Margins"), form, controls, slot);
	await fillWhenReady(slot, ctx.signal, () => marginReport(ctx, range, group));
}

async function marginReport(ctx: PageContext, range: DateRange, group: Group): Promise<Node> {
	const report = await ctx.api.get<PnlReport>(
		"/reports/pnl",
		{
			start_date: range.start,
			end_date: range.end,
			currency: range.currency,
			group_by: group,
			interval: "month",
		},
		ctx.signal,
	);
	const format = (value: number) => money(value, report.currency);
	const rows = report.breakdown ?? [];
	const series = report.series ?? [];
	const target = (row: MarginRow) =>
		row.id === null
			? null
			: group === "customer"
				? `#/customers/${row.id}`
				: group === "agent"
					? `#/agents/${row.id}`
					: null;
	const cell = (value: number, kind: string) =>
		h(
			"span",
			{ class: `num${belowZero(value) ? " negative" : ""}`, "data-value": value, "data-kind": kind },
			format(value),
		);
	return h(
		"div",
		null,
		marginTotals(report),
		section(
			"By month",
			series.length > 0
				? lineChart(
						"Revenue, costs and margin by month",
						series.map((row) => row.period),
						[
							{ label: `Revenue (${report.currency})`, values: series.map((row) => row.revenue) },
							{ label: `Costs (${report.currency})`, values: series.map((row) => row.costs) },
							{ label: `Margin (${report.currency})`, values: series.map((row) => row.margin) },
						],
					)
				: null,
			table(
				["month", "revenue", "costs", "margin", "margin %"],
				series.map((row) => [
					ident(row.period),
					cell(row.revenue, "revenue"),
					cell(row.costs, "costs"),
					cell(row.margin, "margin"),
					h("span", { class: "num" }, percent(row.margin_percent)),
				]),
				"No months in this range.",
			),
		),
		section(
			`By ${group}`,
			rows.length > 0 &&
				barChart(
					`Margin by ${group}`,
					rows.slice(0, 12).map((row) => row.name),
					rows.slice(0, 12).map((row) => row.margin),
					format,
					`Margin: revenue − costs (${report.currency})`,
				),
			table(
				[group === "product" ? "rate plan" : group, "revenue", "costs", "margin", "margin %"],
				rows.map((row) => {
					const href = target(row);
					return [
						href
							? h("a", { href }, row.name)
							: row.id === null
								? h("em", { "data-unattributed": "true" }, row.name)
								: row.name,
						cell(row.revenue, "revenue"),
						cell(row.costs, "costs"),
						cell(row.margin, "margin"),
						h("span", { class: "num" }, percent(row.margin_percent)),
					];
				}),
				"No revenue or costs in this range.",
			),
			rows.some((row) => row.id === null) && unattributedNote(group, true),
		),
	);
}

/** Revenue, costs, margin and margin % of a report, as the P&L and the live margins pages show them. */
export function marginTotals(report: {
	currency: string;
	revenue: number;
	costs: number;
	margin: number;
	margin_percent: number;
}): Node {
	const format = (value: number) => money(value, report.currency);
	return section(
		"Totals",
		h(
			"dl",
			{ class: "metrics", "aria-label": "Totals" },
			(
				[
					["revenue", "Revenue", format(report.revenue)],
					["costs", "Costs", format(report.costs)],
					["margin", "Margin", format(report.margin)],
					["margin_percent", "Margin %", percent(report.margin_percent)],
				] as const
			).map(([key, label, text]) =>
				h(
					"div",
					{
						class: `metric${belowZero(report[key]) ? " negative" : ""}`,
						"data-field": key,
						"data-value": report[key],
					},
					h("dt", null, label),
					h("dd", null, text),
				),
			),
		),
	);
}
