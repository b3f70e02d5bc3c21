/**
 * One subscription: what it is, its alerts and budgets (CONTRACT §18: a threshold on a metric or on the period's
 * total amount, optionally blocking), and links to its live events and invoices.
 */
import { hashOf, type PageContext } from "../context";
import { fill, formValues, h } from "../dom";
import { dateTime, money, percent, quantity } from "../format";
import { nameOr, namesOf } from "../lookups";
import type { Account, Alert, List, RatePlan, Subscription } from "../types";
import {
	badge,
	confirmAction,
	field,
	fillWhenReady,
	ident,
	link,
	runInto,
	section,
	table,
	when,
} from "../ui";
import { planChangeSections } from "./subscription-plan";
import { pricingSections } from "./subscription-pricing";

export async function subscriptionPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const subscription = await ctx.api.get<Subscription>(`/subscriptions/${id}`, undefined, ctx.signal);
	const [account, plan, plans] = await Promise.all([
		ctx.api.get<Account>(`/accounts/${subscription.account_id}`, undefined, ctx.signal).catch(() => null),
		ctx.api
			.get<RatePlan>(`/pricing/rate-plans/${subscription.rate_plan_id}`, undefined, ctx.signal)
			.catch(() => null),
		namesOf(ctx.api, "/pricing/rate-plans", "rate_plans", ctx.signal),
	]);
	const alertsSlot = h("div", { "data-alerts": id });
	const showAlerts = () =>
		fillWhenReady(alertsSlot, ctx.signal, () =>
			alertTable(ctx, subscription, account?.currency ?? plan?.currency ?? "USD", showAlerts),
		);
	fill(
		ctx.view,
		h(
			"p",
			{ class: "crumbs" },
			link("#/customers", "Customers"),
			" / ",
			link(`#/customers/${subscription.account_id}`, account?.name ?? subscription.account_id),
			" / ",
			subscription.id,
		),
		h("h1", null, `Subscription ${subscription.id} `, badge(subscription.status)),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Customer"),
			h("dd", null, link(`#/customers/${subscription.account_id}`, account?.name ?? subscription.account_id)),
			h("dt", null, "Rate plan"),
			h(
				"dd",
				null,
				link(`#/rate-plans/${subscription.rate_plan_id}`, nameOr(plans, subscription.rate_plan_id)),
			),
			h("dt", null, "Instances"),
			h(
				"dd",
				null,
				subscription.agent_instance_ids.map((key) => h("code", { class: "instance" }, key)),
			),
			h("dt", null, "Started"),
			h("dd", null, dateTime(subscription.started_at)),
			h("dt", null, "Cancelled"),
			h("dd", null, dateTime(subscription.cancelled_at)),
		),
		h(
			"p",
			{ class: "actions" },
			link(hashOf("/events", { subscription_id: id }), "Events (live tail) →"),
			link(hashOf("/invoices", { subscription_id: id }), "Invoices →"),
		),
		...planChangeSections(ctx, subscription, plans),
		...pricingSections(ctx, subscription, plan),
		section(
			"Alerts and budgets",
			h(
				"p",
				{ class: "muted" },
				"An alert triggers once per billing period, within seconds of the event that takes the metric's quantity (or, without a metric, the period's amount so far) to its threshold, and sends alert.triggered. A blocking alert makes GET /v1/entitlements answer allowed: false for the subscription's instances until the next period. A margin alert triggers once the period's costs pass its minimum and its live margin falls below the threshold percent.",
			),
			alertsSlot,
			ctx.identity.permission === "read-only" ? null : alertForm(ctx, subscription, plan, showAlerts),
		),
	);
	await showAlerts();
}

/** `currency` is what the subscription is billed in: an amount threshold and a margin alert's minimum are money. */
async function alertTable(
	ctx: PageContext,
	subscription: Subscription,
	currency: string,
	showAlerts: () => Promise<void>,
): Promise<Node> {
	const alerts = await ctx.api.get<List<"alerts", Alert>>(
		"/alerts",
		{ subscription_id: subscription.id, limit: 100 },
		ctx.signal,
	);
	const problem = h("div");
	const rows = (alerts.alerts ?? []).map((alert) => {
		let remove: HTMLButtonElement | null = null;
		if (ctx.identity.permission !== "read-only") {
			const button = h(
				"button",
				{ type: "button", class: "danger small", "aria-label": `Delete alert ${alert.name ?? alert.id}` },
				"Delete",
			);
			button.addEventListener("click", async () => {
				const sure = await confirmAction(
					`Delete the alert ${alert.name ?? alert.id}?`,
					"Delete alert",
					ctx.signal,
				);
				if (!sure) return;
				await runInto(problem, button, async () => {
					await ctx.api.delete(`/alerts/${alert.id}`);
					await showAlerts();
					return null;
				});
			});
			remove = button;
		}
		return [
			alert.name ?? h("code", null, alert.id),
			alert.type === "margin"
				? `margin below, once costs pass ${money(alert.min_costs ?? 0, currency)}`
				: alert.metric
					? h("code", null, alert.metric)
					: "period amount",
			h(
				"span",
				{ class: "num" },
				alert.type === "margin"
					? percent(alert.threshold)
					: alert.metric
						? quantity(alert.threshold)
						: money(alert.threshold, currency),
			),
			alert.type === "margin" ? badge("margin") : alert.block ? badge("blocking") : "notify",
			h("span", { "data-alert-status": alert.id }, badge(alert.status)),
			when(alert.triggered_at),
			ident(alert.billing_period),
			remove ?? "—",
		];
	});
	return h(
		"div",
		null,
		problem,
		table(
			["alert", "on", "threshold", "kind", "status", "triggered", "period", "actions"],
			rows,
			"No alerts on this subscription.",
		),
	);
}

function alertForm(
	ctx: PageContext,
	subscription: Subscription,
	plan: RatePlan | null,
	showAlerts: () => Promise<void>,
): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Add alert");
	const metrics = (plan?.charges ?? []).map((charge) => charge.metric);
	// A margin alert watches the live margin percent: no metric, no blocking, a threshold from -10000 to 100 and
	// the costs the period must pass first (docs/margins.md#margin-alerts).
	const type = h(
		"select",
		{ name: "type" },
		h("option", { value: "usage" }, "usage or spend"),
		h("option", { value: "margin" }, "margin % below"),
	);
	const usageOnly = [
		field(
			"On",
			h(
				"select",
				{ name: "metric" },
				h("option", { value: "" }, "the period's amount so far"),
				metrics.map((metric) => h("option", { value: metric }, metric)),
			),
		),
		h(
			"label",
			{ class: "check" },
			h("input", { type: "checkbox", name: "block", value: "true" }),
			" Block when reached",
		),
	];
	const minCosts = field(
		"Once costs pass",
		h("input", { name: "min_costs", type: "number", min: "0", step: "any", size: 8, placeholder: "0" }),
	);
	const threshold = h("input", {
		name: "threshold",
		type: "number",
		min: "0",
		step: "any",
		required: true,
		size: 8,
	}) as HTMLInputElement;
	const showType = () => {
		const margin = type.value === "margin";
		for (const element of usageOnly) element.hidden = margin;
		minCosts.hidden = !margin;
		threshold.min = margin ? "-10000" : "0";
		threshold.max = margin ? "100" : "";
	};
	type.addEventListener("change", showType);
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Add an alert" },
		field(
			"Name (optional)",
			h("input", { name: "name", maxlength: 100, placeholder: "e.g. monthly budget" }),
		),
		field("Type", type),
		...usageOnly,
		field("Threshold", threshold),
		minCosts,
		button,
	);
	showType();
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const body: Record<string, unknown> = {
				subscription_id: subscription.id,
				threshold: Number(values.threshold),
			};
			if (values.type === "margin") {
				body.type = "margin";
				if (values.min_costs) body.min_costs = Number(values.min_costs);
			} else {
				body.block = values.block === "true";
				if (values.metric) body.metric = values.metric;
			}
			if (values.name) body.name = values.name;
			const alert = await ctx.api.post<Alert>("/alerts", body);
			form.reset();
			showType();
			await showAlerts();
			return h("p", { class: "ok" }, `Alert ${alert.name ?? alert.id} is armed.`);
		});
	});
	return h("div", null, h("h3", null, "Add an alert"), form, result);
}
