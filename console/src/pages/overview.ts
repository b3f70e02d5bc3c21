/**
 * Overview: profit and loss for a date range (GET /v1/reports/pnl), revenue split by customer, product and
 * agent (GET /v1/reports/revenue?group_by=), and one subscription's usage per day (GET /v1/usage, one request
 * per UTC day, since the API sums a range and does not split it).
 */
import { mapLimited } from "../api";
import { barChart, lineChart } from "../charts";
import { hashOf, type PageContext } from "../context";
import { addDays, type DateRange, daysBetween, rangeFrom, rangeProblem, today } from "../dates";
import { fill, h } from "../dom";
import { belowZero, money, percent, quantity } from "../format";
import { nameOr, namesOf } from "../lookups";
import { rangeForm } from "../range-form";
import type { List, Pnl, RevenueReport, Subscription, Usage } from "../types";
import { errorBox, loading, section, table } from "../ui";

/** At most this many days are drawn: one request each. */
const MAX_USAGE_DAYS = 62;

export async function overviewPage(ctx: PageContext): Promise<void> {
	const range = rangeFrom(ctx.query);
	const pnlSlot = h("div", null, loading());
	const revenueSlots = {
		customer: h("div", { "data-group": "customer" }, loading()),
		product: h("div", { "data-group": "product" }, loading()),
		agent: h("div", { "data-group": "agent" }, loading()),
	};
	const usageSlot = h("div", null, loading());
	const form = rangeForm(
		ctx,
		"/overview",
		range,
		ctx.query.get("sub") ? { sub: ctx.query.get("sub") as string } : {},
	);
	// A reversed range is said once, by the form; no report is asked for.
	if (rangeProblem(range)) {
		fill(ctx.view, h("h1", null, "Overview"), form);
		return;
	}
	fill(
		ctx.view,
		h("h1", null, "Overview"),
		form,
		section(
			"Profit and loss",
			pnlSlot,
			h(
				"p",
				null,
				h(
					"a",
					{ href: hashOf("/margins", { start: range.start, end: range.end, currency: range.currency }) },
					"Margins by agent, customer and product, month by month →",
				),
			),
		),
		h(
			"div",
			{ class: "grid-3" },
			section("Revenue by customer", revenueSlots.customer),
			section("Revenue by product (rate plan)", revenueSlots.product),
			section("Revenue by agent", revenueSlots.agent),
		),
		section("Usage per day", usageSlot),
	);
	const shown = (slot: HTMLElement, work: () => Promise<Node>) =>
		work()
			.then((node) => fill(slot, node))
			.catch((error) => {
				if (!ctx.signal.aborted) fill(slot, errorBox(error));
			});
	await Promise.all([
		shown(pnlSlot, () => pnlCards(ctx, range)),
		...(["customer", "product", "agent"] as const).map((group) =>
			shown(revenueSlots[group], () => revenueBy(ctx, range, group)),
		),
		shown(usageSlot, () => usagePerDay(ctx, range)),
	]);
}

function query(range: DateRange) {
	return { start_date: range.start, end_date: range.end, currency: range.currency };
}

async function pnlCards(ctx: PageContext, range: DateRange): Promise<Node> {
	const pnl = await ctx.api.get<Pnl>("/reports/pnl", query(range), ctx.signal);
	const metric = (field: keyof Pnl, label: string, value: number, text: string) =>
		h(
			"div",
			{ class: `metric${belowZero(value) ? " negative" : ""}`, "data-field": field, "data-value": value },
			h("dt", null, label),
			h("dd", null, text),
		);
	return h(
		"div",
		null,
		h(
			"dl",
			{ class: "metrics", "aria-label": "Profit and loss" },
			metric("revenue", "Revenue", pnl.revenue, money(pnl.revenue, pnl.currency)),
			metric("costs", "Costs", pnl.costs, money(pnl.costs, pnl.currency)),
			metric("margin", "Margin", pnl.margin, money(pnl.margin, pnl.currency)),
			metric("margin_percent", "Margin %", pnl.margin_percent, percent(pnl.margin_percent)),
		),
		h(
			"p",
			{ class: "muted" },
			`${pnl.start_date} to ${pnl.end_date}, ${pnl.currency}. Revenue: invoices not void whose billing period starts in the range; costs: cost records whose period starts in it.`,
		),
	);
}

async function revenueBy(
	ctx: PageContext,
	range: DateRange,
	group: "customer" | "product" | "agent",
): Promise<Node> {
	const report = await ctx.api.get<RevenueReport>(
		"/reports/revenue",
		{ ...query(range), group_by: group },
		ctx.signal,
	);
	const format = (value: number) => money(value, report.currency);
	const rows = report.breakdown;
	const target = (id: string | null) =>
		id === null
			? null
			: group === "customer"
				? `#/customers/${id}`
				: group === "agent"
					? `#/agents/${id}`
					: null;
	return h(
		"div",
		null,
		h("p", { class: "total", "data-value": report.revenue }, `Total ${format(report.revenue)}`),
		rows.length > 0 &&
			barChart(
				`Revenue by ${group}`,
				rows.slice(0, 12).map((row) => row.name),
				rows.slice(0, 12).map((row) => row.revenue),
				format,
			),
		table(
			[group === "product" ? "rate plan" : group, "revenue"],
			rows.map((row) => {
				const href = target(row.id);
				return [
					href
						? h("a", { href }, row.name)
						: row.id === null
							? h("em", { "data-unattributed": "true" }, row.name)
							: row.name,
					h("span", { class: "num", "data-value": row.revenue }, format(row.revenue)),
				];
			}),
			"No revenue in this range.",
		),
		rows.some((row) => row.id === null) && unattributedNote(group),
	);
}

/** What the "unattributed" row holds: revenue that the API cannot give to one agent (CONTRACT §12). */
export function unattributedNote(group: "customer" | "product" | "agent", withCosts = false): HTMLElement {
	return h(
		"p",
		{ class: "note muted", "data-note": "unattributed" },
		h("strong", null, "unattributed"),
		group === "agent"
			? ": revenue that belongs to no single agent — the plans' base fees, and usage of instances that are not assigned to an agent. Usage lines are split across agents by their share of each metric."
			: `: revenue${withCosts ? " or costs" : ""} recorded without a ${group === "customer" ? "customer" : "plan"}.`,
		withCosts && " Costs recorded by hand without an agent, customer or plan are counted here too.",
	);
}

async function usagePerDay(ctx: PageContext, range: DateRange): Promise<Node> {
	const [subscriptions, accounts] = await Promise.all([
		ctx.api.get<List<"subscriptions", Subscription>>("/subscriptions", { limit: 100 }, ctx.signal),
		namesOf(ctx.api, "/accounts", "accounts", ctx.signal),
	]);
	if (subscriptions.subscriptions.length === 0) {
		return h("p", { class: "muted empty" }, "No subscriptions yet: usage is read per subscription.");
	}
	const chosen =
		subscriptions.subscriptions.find((s) => s.id === ctx.query.get("sub")) ??
		subscriptions.subscriptions.find((s) => s.status === "active") ??
		(subscriptions.subscriptions[0] as Subscription);
	const picker = h(
		"select",
		{
			name: "sub",
			"aria-label": "Subscription",
			onchange: (event) =>
				ctx.go(
					hashOf("/overview", {
						start: range.start,
						end: range.end,
						currency: range.currency,
						sub: (event.target as HTMLSelectElement).value,
					}),
				),
		},
		subscriptions.subscriptions.map((s) =>
			h(
				"option",
				{ value: s.id, selected: s.id === chosen.id },
				`${nameOr(accounts, s.account_id)} · ${s.agent_instance_ids.join(", ")} (${s.status})`,
			),
		),
	);

	// Days after today hold no usage yet; a long range is cut to its last MAX_USAGE_DAYS days.
	const [end] = [range.end, today()].sort() as [string];
	// GET /v1/usage answers one billing period (§6): the days shown are those of the range in the end's month.
	const monthStart = `${end.slice(0, 7)}-01`;
	let start = range.start < monthStart ? monthStart : range.start;
	if (start > end) return h("div", null, picker, h("p", { class: "muted" }, "The range lies in the future."));
	const wanted = daysBetween(start, end);
	if (wanted.length > MAX_USAGE_DAYS) start = addDays(end, -(MAX_USAGE_DAYS - 1));
	const days = daysBetween(start, end);

	const [whole, perDay] = await Promise.all([
		ctx.api.get<Usage>(
			"/usage",
			{ subscription_id: chosen.id, start_date: start, end_date: end },
			ctx.signal,
		),
		mapLimited(days, 6, (day) =>
			ctx.api.get<Usage>(
				"/usage",
				{ subscription_id: chosen.id, start_date: day, end_date: day },
				ctx.signal,
			),
		),
	]);
	const types = whole.usage.map((line) => `${line.kind} ${line.type}`);
	const series = whole.usage.map((line, i) => ({
		label: types[i] as string,
		values: perDay.map((u) => u.usage.find((l) => l.kind === line.kind && l.type === line.type)?.count ?? 0),
	}));
	return h(
		"div",
		null,
		h("div", { class: "inline" }, h("label", null, "Subscription ", picker)),
		wanted.length > MAX_USAGE_DAYS &&
			h(
				"p",
				{ class: "muted" },
				`Showing the last ${MAX_USAGE_DAYS} days of the range (one request per day).`,
			),
		series.length > 0
			? lineChart("Events per day", days, series)
			: h("p", { class: "muted empty" }, `No usage from ${start} to ${end}.`),
		table(
			["kind", "type", "count", "sum of values"],
			whole.usage.map((line) => [
				line.kind,
				line.type,
				h("span", { class: "num", "data-usage-count": line.type }, quantity(line.count)),
				line.value === null ? "—" : quantity(line.value),
			]),
			"",
		),
		whole.total !== undefined &&
			whole.currency &&
			h(
				"p",
				{ class: "muted" },
				`This subscription's current period (${whole.billing_period}) so far, priced by its plan: ${money(whole.total, whole.currency)}.`,
			),
	);
}
