/**
 * A subscription's plan and billing terms (docs/plan-versions.md, docs/threshold-billing.md, docs/currencies.md):
 * the version that rates it, a pending plan change, its billing currency and invoicing threshold (editable), a
 * change-plan form (from the next billing period on, or now, splitting the current period) and the upcoming invoice
 * of the current period, which shows what the period bills, part by part after a change now.
 */
import type { PageContext } from "../context";
import { fill, formValues, h } from "../dom";
import { dateTime, money } from "../format";
import { nameOr } from "../lookups";
import type { Subscription, UpcomingInvoice } from "../types";
import { field, fillWhenReady, link, runInto, section } from "../ui";

export function planChangeSections(
	ctx: PageContext,
	subscription: Subscription,
	plans: Map<string, string>,
): HTMLElement[] {
	const facts = h("div", { "data-plan-terms": subscription.id });
	const upcoming = h("div", { "data-upcoming": subscription.id });
	const showUpcoming = () => fillWhenReady(upcoming, ctx.signal, () => upcomingInvoice(ctx, subscription.id));
	const showFacts = (sub: Subscription) => fill(facts, termsList(sub, plans));
	showFacts(subscription);
	void showUpcoming();
	const writable = ctx.identity.permission !== "read-only";
	return [
		section(
			"Plan and billing terms",
			facts,
			writable && thresholdForm(ctx, subscription, showFacts),
			writable && changePlanForm(ctx, subscription, plans, showFacts, showUpcoming),
		),
		section("Upcoming invoice (this period so far)", upcoming),
	];
}

function termsList(sub: Subscription, plans: Map<string, string>): HTMLElement {
	const pending = sub.pending_plan_change;
	return h(
		"dl",
		{ class: "facts" },
		h("dt", null, "Plan version"),
		h(
			"dd",
			{ "data-plan-version": "" },
			link(`#/rate-plans/${sub.rate_plan_id}`, nameOr(plans, sub.rate_plan_id)),
			` v${sub.rate_plan_version}`,
		),
		h("dt", null, "Pending plan change"),
		h(
			"dd",
			{ "data-pending-plan-change": "" },
			pending === null
				? "none"
				: `${nameOr(plans, pending.rate_plan_id)} v${pending.version} from ${dateTime(pending.at)}`,
		),
		h("dt", null, "Billing currency"),
		h("dd", { "data-billing-currency": "" }, sub.billing_currency),
		h("dt", null, "Invoicing threshold"),
		h(
			"dd",
			{ "data-invoicing-threshold": "" },
			sub.invoicing_threshold === null ? "none" : money(sub.invoicing_threshold, sub.billing_currency),
		),
	);
}

function thresholdForm(
	ctx: PageContext,
	sub: Subscription,
	showFacts: (s: Subscription) => void,
): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit" }, "Save threshold");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Invoicing threshold" },
		field(
			`Invoicing threshold (${sub.billing_currency}, empty: none)`,
			h("input", {
				name: "threshold",
				type: "number",
				min: "0",
				step: "any",
				size: 10,
				value: sub.invoicing_threshold === null ? "" : String(sub.invoicing_threshold),
			}),
		),
		button,
		result,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const value = formValues(form).threshold ?? "";
		void runInto(result, button, async () => {
			const body = { invoicing_threshold: value === "" ? null : Number(value) };
			const updated = await ctx.api.patch<Subscription>(`/subscriptions/${sub.id}`, body);
			showFacts(updated);
			return h("p", { class: "ok" }, "Threshold saved.");
		});
	});
	return form;
}

function changePlanForm(
	ctx: PageContext,
	sub: Subscription,
	plans: Map<string, string>,
	showFacts: (s: Subscription) => void,
	showUpcoming: () => Promise<void>,
): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Change plan");
	const options = [...plans].map(([id, name]) =>
		h("option", { value: id, ...(id === sub.rate_plan_id ? { selected: true } : {}) }, name),
	);
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Change plan" },
		field("Plan", h("select", { name: "rate_plan_id" }, options)),
		field("Version (empty: latest)", h("input", { name: "version", type: "number", min: "1", size: 4 })),
		field(
			"When",
			h(
				"select",
				{ name: "at" },
				h("option", { value: "period_end", selected: true }, "At period end"),
				h("option", { value: "now" }, "Now (splits this period)"),
			),
		),
		button,
		result,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const at = values.at === "now" ? "now" : "period_end";
			const body: Record<string, unknown> = { rate_plan_id: values.rate_plan_id, at };
			if (values.version) body.version = Number(values.version);
			const updated = await ctx.api.post<Subscription>(`/subscriptions/${sub.id}/change-plan`, body);
			showFacts(updated);
			await showUpcoming();
			const pending = updated.pending_plan_change;
			return h(
				"p",
				{ class: "ok" },
				at === "now"
					? `Now on ${nameOr(plans, updated.rate_plan_id)} v${updated.rate_plan_version}: this period is billed in parts (upcoming invoice below).`
					: pending === null
						? "No plan change is pending."
						: `From ${dateTime(pending.at)} on: ${nameOr(plans, pending.rate_plan_id)} v${pending.version}.`,
			);
		});
	});
	return form;
}

async function upcomingInvoice(ctx: PageContext, id: string): Promise<Node> {
	const invoice = await ctx.api.get<UpcomingInvoice>(
		"/invoices/upcoming",
		{ subscription_id: id },
		ctx.signal,
	);
	return h(
		"p",
		{ "data-upcoming-amount": String(invoice.amount) },
		`${invoice.billing_period}: ${money(invoice.amount, invoice.currency)} so far (${invoice.line_items.length} lines), issued as the period closes.`,
	);
}
