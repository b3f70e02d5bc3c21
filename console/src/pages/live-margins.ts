/**
 * Live margins (docs/margins.md): one billing period's revenue, costs and margin from GET /v1/reports/margins — the
 * current month live (what its invoices would be now, costs so far), redrawn every few seconds while it is shown,
 * or a past month as invoiced — broken down by model (the default), agent, customer or product.
 */
import { barChart } from "../charts";
import { hashOf, type PageContext } from "../context";
import { fill, h } from "../dom";
import { belowZero, money, percent } from "../format";
import { currencySelect } from "../range-form";
import type { MarginsReport } from "../types";
import { field, fillWhenReady, section, table } from "../ui";
import { marginTotals } from "./margins";

const GROUPS = [
	["model", "model"],
	["agent", "agent"],
	["customer", "customer"],
	["product", "product (rate plan)"],
] as const;
type Group = (typeof GROUPS)[number][0];

// An open period is drawn again this often while its page is shown.
const REFRESH_MS = 10_000;
const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;

const currentPeriod = () => new Date().toISOString().slice(0, 7);

export async function liveMarginsPage(ctx: PageContext): Promise<void> {
	const asked = ctx.query.get("period") ?? "";
	const period = PERIOD.test(asked) ? asked : currentPeriod();
	const group: Group = GROUPS.find(([g]) => g === ctx.query.get("group_by"))?.[0] ?? "model";
	const currency = ctx.query.get("currency") ?? "USD";
	const go = (changes: Record<string, string>) =>
		ctx.go(hashOf("/margins/live", { period, group_by: group, currency, ...changes }));

	const month = h("input", { type: "month", name: "period", value: period, max: currentPeriod() });
	month.addEventListener("change", () => {
		if (PERIOD.test(month.value)) go({ period: month.value });
	});
	const picker = h(
		"select",
		{ name: "group_by" },
		GROUPS.map(([value, label]) => h("option", { value, selected: value === group }, label)),
	);
	picker.addEventListener("change", () => go({ group_by: picker.value }));
	const currencies = currencySelect(currency);
	currencies.addEventListener("change", () => go({ currency: currencies.value }));
	const refresh = h("button", { type: "button" }, "Refresh");
	const controls = h(
		"div",
		{ class: "inline-form" },
		field("Month", month),
		field("By", picker),
		field("Currency", currencies),
		refresh,
	);
	const slot = h("div", { "data-live-margins": group });
	fill(ctx.view, h("h1", null, "Live margins"), controls, slot);

	const draw = () => fillWhenReady(slot, ctx.signal, () => marginsReport(ctx, period, group, currency));
	refresh.addEventListener("click", () => void draw());
	await draw();
	if (period === currentPeriod()) {
		const timer = setInterval(() => {
			if (!ctx.signal.aborted && document.visibilityState === "visible") void draw();
		}, REFRESH_MS);
		ctx.signal.addEventListener("abort", () => clearInterval(timer));
	}
}

async function marginsReport(
	ctx: PageContext,
	period: string,
	group: Group,
	currency: string,
): Promise<Node> {
	const report = await ctx.api.get<MarginsReport>(
		"/reports/margins",
		{ billing_period: period, group_by: group, currency },
		ctx.signal,
	);
	const format = (value: number) => money(value, report.currency);
	const cell = (value: number, kind: string) =>
		h(
			"span",
			{
				class: `num${belowZero(value, report.currency) ? " negative" : ""}`,
				"data-value": value,
				"data-kind": kind,
			},
			format(value),
		);
	const rows = report.breakdown;
	const label = group === "product" ? "rate plan" : group;
	return h(
		"div",
		{ "data-status": report.status },
		h(
			"p",
			{ class: "hint" },
			report.status === "open"
				? `${period} is open: revenue is what its invoices would be if it closed now, costs are those recorded so far. Updated ${new Date().toISOString().slice(11, 19)} UTC.`
				: `${period} is closed: revenue as invoiced, costs as recorded.`,
		),
		marginTotals(report),
		section(
			`By ${label}`,
			rows.length > 0 &&
				barChart(
					group === "model" ? "Cost by model" : `Margin by ${label}`,
					rows.slice(0, 12).map((row) => row.name),
					rows.slice(0, 12).map((row) => (group === "model" ? row.costs : row.margin)),
					format,
					group === "model" ? `Costs (${report.currency})` : `Margin: revenue − costs (${report.currency})`,
				),
			table(
				[label, "revenue", "costs", "margin", "margin %"],
				rows.map((row) => [
					row.id === null ? h("em", { "data-unattributed": "true" }, row.name) : row.name,
					cell(row.revenue, "revenue"),
					cell(row.costs, "costs"),
					cell(row.margin, "margin"),
					h("span", { class: "num" }, percent(row.margin_percent)),
				]),
				"No revenue or costs in this month.",
			),
			group === "model" &&
				h(
					"p",
					{ class: "hint" },
					"Revenue goes to a model only through charges whose filter names exactly that model; base fees, other charges and costs without a model are unattributed.",
				),
		),
	);
}
