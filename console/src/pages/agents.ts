/** Agents with their instances, and what each agent cost in a date range (GET /v1/costs?agent_id=). */
import { mapLimited } from "../api";
import { hashOf, type PageContext, pageOffset } from "../context";
import { type DateRange, rangeFrom, rangeProblem } from "../dates";
import { fill, h } from "../dom";
import { dateTime, day, money } from "../format";
import { nameOr, namesOf } from "../lookups";
import { rangeForm } from "../range-form";
import type { Agent, AgentInstance, CostList, List } from "../types";
import { ident, link, pager, section, table } from "../ui";

const PAGE = 20;

function costQuery(range: DateRange, agentId: string, limit: number, offset = 0) {
	return {
		agent_id: agentId,
		start_date: range.start,
		end_date: range.end,
		currency: range.currency,
		limit,
		offset,
	};
}

export async function agentsPage(ctx: PageContext): Promise<void> {
	const range = rangeFrom(ctx.query);
	const offset = pageOffset(ctx.query);
	if (rangeProblem(range)) {
		fill(ctx.view, h("h1", null, "Agents"), rangeForm(ctx, "/agents", range));
		return;
	}
	const agents = await ctx.api.get<List<"agents", Agent>>("/agents", { limit: PAGE, offset }, ctx.signal);
	// Per agent of this page (at most 20): its instances, and the sum of its cost records (limit 1: only the total).
	const [instances, costs] = await Promise.all([
		mapLimited(agents.agents, 6, (agent) =>
			ctx.api.get<List<"instances", AgentInstance>>(
				`/agents/${agent.id}/instances`,
				{ limit: 100 },
				ctx.signal,
			),
		),
		mapLimited(agents.agents, 6, (agent) =>
			ctx.api.get<CostList>("/costs", costQuery(range, agent.id, 1), ctx.signal),
		),
	]);
	fill(
		ctx.view,
		h("h1", null, "Agents"),
		rangeForm(ctx, "/agents", range),
		table(
			["agent", "type", "instances", `cost ${range.start} to ${range.end}`],
			agents.agents.map((agent, i) => {
				const own = instances[i] as List<"instances", AgentInstance>;
				const cost = costs[i] as CostList;
				return [
					link(
						hashOf(`/agents/${agent.id}`, { start: range.start, end: range.end, currency: range.currency }),
						agent.name,
					),
					agent.type,
					own.instances.length === 0
						? h("span", { class: "muted" }, "none")
						: [
								own.instances.map((instance) => h("code", { class: "instance" }, instance.key)),
								own.total > own.instances.length && ` and ${own.total - own.instances.length} more`,
							],
					h(
						"span",
						{ class: "num", "data-agent-cost": agent.id, "data-value": cost.total },
						money(cost.total, cost.currency),
						h("small", { class: "muted" }, ` (${cost.count} record${cost.count === 1 ? "" : "s"})`),
					),
				];
			}),
			"No agents yet. Create them with POST /v1/agents.",
		),
		pager(agents, (next) =>
			ctx.go(
				hashOf("/agents", { start: range.start, end: range.end, currency: range.currency, offset: next }),
			),
		),
	);
}

export async function agentPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const range = rangeFrom(ctx.query);
	const offset = pageOffset(ctx.query);
	const reversed = rangeProblem(range) !== null;
	const [agent, instances, costs, accounts] = await Promise.all([
		ctx.api.get<Agent>(`/agents/${id}`, undefined, ctx.signal),
		ctx.api.get<List<"instances", AgentInstance>>(`/agents/${id}/instances`, { limit: 100 }, ctx.signal),
		reversed ? null : ctx.api.get<CostList>("/costs", costQuery(range, id, PAGE, offset), ctx.signal),
		namesOf(ctx.api, "/accounts", "accounts", ctx.signal),
	]);
	fill(
		ctx.view,
		h("p", { class: "crumbs" }, link("#/agents", "Agents"), " / ", agent.id),
		h("h1", null, agent.name),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Type"),
			h("dd", null, agent.type),
			h("dt", null, "Description"),
			h("dd", null, agent.description ?? "—"),
			h("dt", null, "Created"),
			h("dd", null, dateTime(agent.created_at)),
		),
		section(
			"Instances",
			table(
				["key", "name", "registered"],
				instances.instances.map((instance) => [
					link(hashOf("/events", { agent_key: instance.key }), instance.key, {
						class: "code",
						title: `Events of ${instance.key}`,
					}),
					instance.name ?? "—",
					ident(day(instance.created_at)),
				]),
				"No instances. Register one with POST /v1/agents/{agent_id}/instances.",
			),
		),
		section(
			"Costs",
			rangeForm(ctx, `/agents/${id}`, range),
			costs && costTable(ctx, id, range, costs, accounts),
		),
	);
}

function costTable(
	ctx: PageContext,
	id: string,
	range: DateRange,
	costs: CostList,
	accounts: Map<string, string>,
): HTMLElement {
	return h(
		"div",
		null,
		h(
			"p",
			{ class: "total", "data-value": costs.total },
			`Total ${money(costs.total, costs.currency)} in ${costs.count} record${costs.count === 1 ? "" : "s"} whose period overlaps ${range.start} to ${range.end}.`,
		),
		table(
			["period", "cost type", "customer", "source", "amount"],
			costs.costs.map((cost) => [
				cost.period,
				cost.cost_type,
				cost.customer_id ? link(`#/customers/${cost.customer_id}`, nameOr(accounts, cost.customer_id)) : "—",
				cost.source,
				h("span", { class: "num" }, money(cost.amount, cost.currency)),
			]),
			"No cost records in this range.",
		),
		pager({ total: costs.count, limit: costs.limit, offset: costs.offset }, (next) =>
			ctx.go(
				hashOf(`/agents/${id}`, {
					start: range.start,
					end: range.end,
					currency: range.currency,
					offset: next,
				}),
			),
		),
	);
}
