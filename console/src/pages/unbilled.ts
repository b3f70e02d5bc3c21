/**
 * Unbilled usage (CONTRACT §19): events of instances that no subscription covered when they happened, per
 * billing period (GET /v1/usage/unbilled), and one click to start a subscription for an instance that adopts its
 * unbilled usage since the chosen start (POST /v1/subscriptions with started_at and adopt_unbilled_usage).
 */
import { hashOf, type PageContext } from "../context";
import { addDays, currentPeriod, today } from "../dates";
import { fill, formValues, h } from "../dom";
import { quantity } from "../format";
import { namesOf } from "../lookups";
import type { Subscription, UnbilledUsage } from "../types";
import { field, fillWhenReady, link, runInto, section, table } from "../ui";

/** How far back a subscription may start (§19). */
const MAX_BACKDATE_DAYS = 35;

export async function unbilledPage(ctx: PageContext): Promise<void> {
	const wanted = ctx.query.get("billing_period") ?? "";
	const period = /^\d{4}-\d{2}$/.test(wanted) ? wanted : currentPeriod();
	const picker = h("input", { type: "month", name: "billing_period", value: period, max: currentPeriod() });
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Billing period" },
		field("Billing period", picker),
		h("button", { type: "submit" }, "Show"),
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		ctx.go(hashOf("/usage/unbilled", { billing_period: picker.value }));
	});
	const slot = h("div");
	fill(
		ctx.view,
		h("h1", null, "Unbilled usage"),
		h(
			"p",
			{ class: "muted" },
			"Events are recorded even when no subscription covers their instance at that moment; they are never billed on their own. Start a subscription that adopts them, and they are billed with its first period.",
		),
		form,
		slot,
	);
	await fillWhenReady(slot, ctx.signal, () => unbilledTable(ctx, period));
}

async function unbilledTable(ctx: PageContext, period: string): Promise<Node> {
	const [unbilled, accounts, plans] = await Promise.all([
		ctx.api.get<UnbilledUsage>("/usage/unbilled", { billing_period: period }, ctx.signal),
		namesOf(ctx.api, "/accounts", "accounts", ctx.signal),
		namesOf(ctx.api, "/pricing/rate-plans", "rate_plans", ctx.signal),
	]);
	const byInstance = new Map<string, UnbilledUsage["usage"]>();
	for (const line of unbilled.usage) {
		byInstance.set(line.agent_key, [...(byInstance.get(line.agent_key) ?? []), line]);
	}
	if (byInstance.size === 0) {
		return h(
			"p",
			{ class: "muted empty" },
			`No unbilled usage in ${unbilled.billing_period}: every event was covered.`,
		);
	}
	return h(
		"div",
		null,
		[...byInstance].map(([agentKey, lines]) =>
			section(
				agentKey,
				table(
					["kind", "type", "events", "sum of values"],
					lines.map((line) => [
						line.kind,
						h("code", null, line.type),
						h(
							"span",
							{ class: "num", "data-unbilled-count": `${agentKey}:${line.type}` },
							quantity(line.count),
						),
						line.value === null ? "—" : h("span", { class: "num" }, quantity(line.value)),
					]),
				),
				ctx.identity.permission === "read-only" ? null : adoptForm(ctx, agentKey, period, accounts, plans),
			),
		),
	);
}

function adoptForm(
	ctx: PageContext,
	agentKey: string,
	period: string,
	accounts: Map<string, string>,
	plans: Map<string, string>,
): HTMLElement {
	const earliest = addDays(today(), -MAX_BACKDATE_DAYS);
	const periodStart = `${period}-01`;
	const start = periodStart < earliest ? earliest : periodStart > today() ? today() : periodStart;
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Subscribe and adopt this usage");
	const form = h(
		"form",
		{
			class: "inline-form adopt",
			"aria-label": `Adopt the unbilled usage of ${agentKey}`,
			"data-adopt": agentKey,
		},
		field(
			"Customer",
			h(
				"select",
				{ name: "account_id", required: true },
				[...accounts].map(([id, name]) => h("option", { value: id }, name)),
			),
		),
		field(
			"Rate plan",
			h(
				"select",
				{ name: "rate_plan_id", required: true },
				[...plans].map(([id, name]) => h("option", { value: id }, name)),
			),
		),
		field(
			"Starting (UTC)",
			h("input", {
				type: "date",
				name: "started_at",
				value: start,
				min: earliest,
				max: today(),
				required: true,
			}),
		),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const startedAt =
				values.started_at === today() ? new Date().toISOString() : `${values.started_at}T00:00:00.000Z`;
			const subscription = await ctx.api.post<Subscription>("/subscriptions", {
				account_id: values.account_id,
				rate_plan_id: values.rate_plan_id,
				agent_instance_ids: [agentKey],
				started_at: startedAt,
				adopt_unbilled_usage: true,
			});
			return h(
				"p",
				{ class: "ok" },
				"Subscribed: ",
				link(`#/subscriptions/${subscription.id}`, subscription.id),
				` now bills ${agentKey}'s usage since ${values.started_at}.`,
			);
		});
	});
	return h("div", { class: "adopt-box" }, form, result);
}
