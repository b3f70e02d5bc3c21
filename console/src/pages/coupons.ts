/**
 * Coupons (docs/discounts.md): every coupon with how often it was redeemed, creating one (a percentage or an
 * amount off, for one, several or every billing period) and archiving one. Applying a coupon is on the
 * subscription's page.
 */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, formValues, h } from "../dom";
import { money, quantity } from "../format";
import type { Coupon, List } from "../types";
import { badge, confirmAction, field, fillWhenReady, pager, runInto, section, table, when } from "../ui";

const PAGE = 20;

/** "20% off" or "USD 50.00 off", then for how long. */
export function couponTerms(coupon: Coupon): string {
	const off =
		coupon.percent_off !== null
			? `${quantity(coupon.percent_off)}% off`
			: `${money(coupon.amount_off ?? 0, coupon.currency ?? "USD")} off`;
	const span =
		coupon.duration === "once"
			? "once"
			: coupon.duration === "forever"
				? "forever"
				: `for ${coupon.duration_in_periods} periods`;
	return `${off}, ${span}`;
}

export async function couponsPage(ctx: PageContext): Promise<void> {
	const slot = h("div", { "data-coupons": "" });
	const show = () => fillWhenReady(slot, ctx.signal, () => couponTable(ctx, show));
	fill(
		ctx.view,
		h("h1", null, "Coupons"),
		section("Coupons", slot),
		ctx.identity.permission === "read-only" ? null : section("Create a coupon", couponForm(ctx, show)),
	);
	await show();
}

async function couponTable(ctx: PageContext, show: () => Promise<void>): Promise<Node> {
	const page = await ctx.api.get<List<"coupons", Coupon>>(
		"/coupons",
		{ limit: PAGE, offset: pageOffset(ctx.query) },
		ctx.signal,
	);
	const problem = h("div");
	const rows = (page.coupons ?? []).map((coupon) => {
		let archive: HTMLButtonElement | null = null;
		if (coupon.status === "active" && ctx.identity.permission !== "read-only") {
			const button = h(
				"button",
				{ type: "button", class: "danger small", "aria-label": `Archive coupon ${coupon.code}` },
				"Archive",
			);
			button.addEventListener("click", async () => {
				const sure = await confirmAction(
					`Archive ${coupon.code}? It can no longer be redeemed; discounts already applied go on.`,
					"Archive coupon",
					ctx.signal,
				);
				if (!sure) return;
				await runInto(problem, button, async () => {
					await ctx.api.delete(`/coupons/${coupon.id}`);
					await show();
					return null;
				});
			});
			archive = button;
		}
		return [
			h("code", { "data-coupon": coupon.id }, coupon.code),
			coupon.name ?? "—",
			couponTerms(coupon),
			h(
				"span",
				{ class: "num" },
				coupon.max_redemptions === null
					? String(coupon.times_redeemed)
					: `${coupon.times_redeemed} of ${coupon.max_redemptions}`,
			),
			when(coupon.redeem_by),
			h("span", { "data-coupon-status": coupon.id }, badge(coupon.status)),
			archive ?? "—",
		];
	});
	return h(
		"div",
		null,
		problem,
		table(["code", "name", "terms", "redeemed", "redeem by", "status", "actions"], rows, "No coupons yet."),
		pager(page, (next) => ctx.go(hashOf("/coupons", { offset: next }))),
	);
}

function couponForm(ctx: PageContext, show: () => Promise<void>): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Create coupon");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Create a coupon" },
		field("Code", h("input", { name: "code", required: true, maxlength: 64, pattern: "[A-Za-z0-9_\\-]+" })),
		field("Name (optional)", h("input", { name: "name", maxlength: 200 })),
		field(
			"Kind",
			h(
				"select",
				{ name: "kind" },
				h("option", { value: "percent" }, "percent off"),
				h("option", { value: "amount" }, "amount off"),
			),
		),
		field(
			"Value",
			h("input", { name: "value", type: "number", min: "0", step: "any", required: true, size: 8 }),
		),
		field(
			"Currency (amount off)",
			h("input", { name: "currency", maxlength: 3, size: 4, placeholder: "USD" }),
		),
		field(
			"Duration",
			h(
				"select",
				{ name: "duration" },
				h("option", { value: "once" }, "once"),
				h("option", { value: "repeating" }, "repeating"),
				h("option", { value: "forever" }, "forever"),
			),
		),
		field(
			"Periods (repeating)",
			h("input", { name: "periods", type: "number", min: "1", max: "120", size: 4 }),
		),
		field("Max redemptions", h("input", { name: "max", type: "number", min: "1", size: 6 })),
		field("Redeem by (last day, UTC)", h("input", { name: "redeem_by", type: "date" })),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const body: Record<string, unknown> = { code: values.code, duration: values.duration };
			if (values.name) body.name = values.name;
			if (values.kind === "amount") {
				body.amount_off = Number(values.value);
				body.currency = (values.currency || "USD").toUpperCase();
			} else body.percent_off = Number(values.value);
			if (values.duration === "repeating") body.duration_in_periods = Number(values.periods);
			if (values.max) body.max_redemptions = Number(values.max);
			// Redeemable through the whole of that day, in UTC as billing is.
			if (values.redeem_by) body.redeem_by = `${values.redeem_by}T23:59:59.999Z`;
			const coupon = await ctx.api.post<Coupon>("/coupons", body);
			form.reset();
			await show();
			return h("p", { class: "ok" }, `Coupon ${coupon.code} created: ${couponTerms(coupon)}.`);
		});
	});
	return form;
}
