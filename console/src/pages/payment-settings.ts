/**
 * "Payments" on a customer's page (docs/payments.md#accounts): how the account pays — by hand or through Stripe —
 * its Stripe customer (with a link to it in Stripe's dashboard), its saved payment method, and whether a failed
 * collection blocks its entitlements; and, for keys that may write, a form that changes them with PATCH. The two
 * refusals particular to Stripe are said in the API's words and then what to do about them.
 */
import { ApiFailure } from "../api";
import type { PageContext } from "../context";
import { type Child, h } from "../dom";
import type { Account } from "../types";
import { badge, errorBox, field, runInto, section } from "../ui";

type PaymentSettings = Pick<
	Account,
	"payment_provider" | "stripe_customer_id" | "stripe_payment_method_id" | "block_on_failed_payment"
>;

/** Stripe's dashboard page of a customer, in test mode when the console's key is of the test environment. */
function dashboardUrl(customerId: string, environment: string | null): string {
	return `https://dashboard.stripe.com/${environment === "test" ? "test/" : ""}customers/${encodeURIComponent(customerId)}`;
}

function facts(account: PaymentSettings, environment: string | null): HTMLElement {
	const customer = account.stripe_customer_id;
	return h(
		"dl",
		{ class: "facts payment-facts" },
		h("dt", null, "Pays"),
		h(
			"dd",
			{ "data-payment-provider": account.payment_provider },
			badge(account.payment_provider),
			account.payment_provider === "stripe" ? " collected through Stripe" : " recorded by hand",
		),
		h("dt", null, "Stripe customer"),
		h(
			"dd",
			{ class: "stripe-customer" },
			customer === null
				? "—"
				: [
						h("code", null, customer),
						" ",
						h(
							"a",
							{ href: dashboardUrl(customer, environment), rel: "noopener noreferrer", target: "_blank" },
							"Open in Stripe",
						),
					],
		),
		h("dt", null, "Payment method"),
		h(
			"dd",
			{ class: "payment-method" },
			account.stripe_payment_method_id === null
				? "none: invoices are paid on a Stripe Checkout page"
				: h("code", null, account.stripe_payment_method_id),
		),
		h("dt", null, "Failed payment blocks"),
		h(
			"dd",
			{ class: "blocks" },
			account.block_on_failed_payment ? "yes: entitlements answer allowed: false" : "no",
		),
	);
}

/** What to do about the refusals particular to Stripe, under the API's own error. */
function refusal(error: unknown): Child {
	const box = errorBox(error);
	if (!(error instanceof ApiFailure)) return box;
	const hint =
		error.status === 409 && error.code === "conflict"
			? "Nothing was changed. Collection through Stripe needs this environment's Stripe key (the Worker " +
				"secret STRIPE_SECRET_KEY, or STRIPE_TEST_SECRET_KEY for test)."
			: error.status === 502
				? "Nothing was changed: Stripe refused to create the customer. Check the account's e-mail and " +
					"billing address, or try again."
				: null;
	return [box, hint && h("p", { class: "hint refusal-hint" }, hint)];
}

/** The fields of the form that differ from the account: the PATCH body, or null when nothing changed. */
function changes(form: HTMLFormElement, account: PaymentSettings): Record<string, unknown> | null {
	const data = new FormData(form);
	const wanted: PaymentSettings = {
		payment_provider: data.get("payment_provider") === "stripe" ? "stripe" : "manual",
		stripe_customer_id: account.stripe_customer_id,
		stripe_payment_method_id: String(data.get("stripe_payment_method_id") ?? "").trim() || null,
		block_on_failed_payment: data.get("block_on_failed_payment") === "on",
	};
	const body = Object.fromEntries(
		(Object.keys(wanted) as (keyof PaymentSettings)[])
			.filter((name) => wanted[name] !== account[name])
			.map((name) => [name, wanted[name]]),
	);
	return Object.keys(body).length === 0 ? null : body;
}

function settingsForm(ctx: PageContext, account: Account, result: HTMLElement): HTMLFormElement {
	const save = h("button", { type: "submit", class: "primary" }, "Save payment settings");
	const option = (value: string, label: string) =>
		h("option", { value, selected: account.payment_provider === value }, label);
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Payment settings" },
		field(
			"Pays",
			h(
				"select",
				{ name: "payment_provider" },
				option("manual", "by hand"),
				option("stripe", "through Stripe"),
			),
		),
		field(
			"Stripe payment method",
			h("input", {
				name: "stripe_payment_method_id",
				value: account.stripe_payment_method_id ?? "",
				placeholder: "pm_… (empty: pay on Checkout)",
				maxlength: 255,
			}),
		),
		h(
			"label",
			{ class: "check" },
			h("input", {
				type: "checkbox",
				name: "block_on_failed_payment",
				checked: account.block_on_failed_payment,
			}),
			" Block entitlements while a collection has failed",
		),
		save,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const body = changes(form, account);
		if (body === null) {
			result.replaceChildren(h("p", { class: "muted" }, "Nothing to change."));
			return;
		}
		void runInto(result, save, async () => {
			try {
				await ctx.api.patch<Account>(`/accounts/${account.id}`, body);
			} catch (error) {
				return refusal(error);
			}
			ctx.refresh();
			return null;
		});
	});
	return form;
}

export function paymentSettingsSection(ctx: PageContext, account: Account): HTMLElement {
	const result = h("div", { "aria-live": "polite", class: "payment-settings-result" });
	return section(
		"Payments",
		facts(account, ctx.identity.environment),
		ctx.identity.permission === "read-only" ? null : settingsForm(ctx, account, result),
		result,
	);
}
