/**
 * A subscription's negotiated prices beside the plan's list prices, pending ones included, and its discount with
 * a form to apply a coupon (docs/discounts.md).
 */
import type { PageContext } from "../context";
import { formValues, h } from "../dom";
import { quantity } from "../format";
import type { Coupon, Discount, PriceOverride, RatePlan, Subscription } from "../types";
import { field, fillWhenReady, runInto, section, table } from "../ui";
import { couponTerms } from "./coupons";

type Priced = RatePlan["charges"][number] | PriceOverride;

/** One line that says how a metric is priced: "0.001 per unit, 1,000 included". */
export function priceTerms(price: Priced, currency: string): string {
	let terms: string;
	switch (price.model) {
		case "per_unit":
			terms = `${quantity(price.unit_price)} ${currency} per unit`;
			break;
		case "package":
			terms = `${quantity(price.package_price)} ${currency} per ${quantity(price.package_size)} units`;
			break;
		case "tiered":
		case "volume":
			terms = `${price.model}: ${price.tiers
				.map(
					(tier) =>
						`${quantity(tier.unit_price)} ${tier.up_to === null ? "above" : `up to ${quantity(tier.up_to)}`}`,
				)
				.join(", ")}`;
			break;
		case "percentage":
			terms = `${quantity(price.percent)}% of the value`;
			break;
		case "cost_plus":
			terms = `cost + ${quantity(price.markup_percent)}%`;
			break;
		default:
			terms = "—";
	}
	return price.included_quantity ? `${terms}, ${quantity(price.included_quantity)} included` : terms;
}

export function pricingSections(
	ctx: PageContext,
	subscription: Subscription,
	plan: RatePlan | null,
): HTMLElement[] {
	return [negotiatedPrices(subscription, plan), discountSection(ctx, subscription)];
}

function negotiatedPrices(subscription: Subscription, plan: RatePlan | null): HTMLElement {
	const currency = plan?.currency ?? "USD";
	const current = new Map(subscription.price_overrides.map((o) => [o.metric, o]));
	const pending = subscription.pending_price_overrides
		? new Map(subscription.pending_price_overrides.map((o) => [o.metric, o]))
		: null;
	const rows = (plan?.charges ?? []).map((charge) => {
		const negotiated = current.get(charge.metric);
		const next = pending?.get(charge.metric);
		return [
			h("code", null, charge.metric),
			priceTerms(charge, currency),
			h(
				"span",
				{ "data-override": charge.metric },
				negotiated ? h("strong", null, priceTerms(negotiated, currency)) : "list price",
			),
			pending === null ? "—" : next ? priceTerms(next, currency) : "list price",
		];
	});
	return section(
		"Prices",
		h(
			"p",
			{ class: "muted" },
			"Negotiated prices replace the plan's price of a metric for this subscription only. Changes made now apply from the next billing period.",
		),
		table(["metric", "list price", "this period", "from next period"], rows, "The plan has no charges."),
	);
}

function discountSection(ctx: PageContext, subscription: Subscription): HTMLElement {
	const slot = h("div", { "data-discount": subscription.id });
	const show = (discount: Discount | null) =>
		fillWhenReady(slot, ctx.signal, async () => {
			if (discount === null) return h("p", { class: "muted" }, "No discount.");
			const coupon = await ctx.api
				.get<Coupon>(`/coupons/${discount.coupon_id}`, undefined, ctx.signal)
				.catch(() => null);
			return h(
				"p",
				null,
				h("code", null, coupon?.code ?? discount.coupon_id),
				` ${coupon ? couponTerms(coupon) : ""} — from ${discount.start_period}`,
				discount.end_period ? ` to ${discount.end_period}` : ", every period",
			);
		});
	void show(subscription.discount);
	const canApply = ctx.identity.permission !== "read-only" && subscription.status === "active";
	return section("Discount", slot, canApply ? applyForm(ctx, subscription, show) : null);
}

function applyForm(
	ctx: PageContext,
	subscription: Subscription,
	show: (discount: Discount | null) => Promise<void>,
): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Apply coupon");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Apply a coupon" },
		field("Coupon code", h("input", { name: "code", required: true, maxlength: 64 })),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const discount = await ctx.api.post<Discount>(`/subscriptions/${subscription.id}/discounts`, {
				code: values.code,
			});
			form.reset();
			await show(discount);
			return h("p", { class: "ok" }, `Coupon ${values.code} applied from ${discount.start_period}.`);
		});
	});
	return h("div", null, form, result);
}
