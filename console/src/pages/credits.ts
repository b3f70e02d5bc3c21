/**
 * A customer's prepaid credit (CONTRACT §17): the balance (available, what the current periods have accrued so far,
 * and what is left after it), the grants with what remains of each, granting credit and voiding a grant.
 */
import type { PageContext } from "../context";
import { formValues, h } from "../dom";
import { belowZero, money } from "../format";
import type { Account, Balance, CreditGrant, List } from "../types";
import { badge, confirmAction, field, fillWhenReady, runInto, section, table, when } from "../ui";

export function creditSection(ctx: PageContext, account: Account): HTMLElement {
	const balanceSlot = h("div", { "data-balance": account.id });
	const grantsSlot = h("div", { "data-grants": account.id });
	const showBalance = () => fillWhenReady(balanceSlot, ctx.signal, () => balanceCards(ctx, account));
	const showGrants = () => fillWhenReady(grantsSlot, ctx.signal, () => grantTable(ctx, account, refresh));
	const refresh = async () => {
		await Promise.all([showBalance(), showGrants()]);
	};
	void refresh();
	return section(
		"Credit",
		balanceSlot,
		grantsSlot,
		ctx.identity.permission === "read-only" ? null : grantForm(ctx, account, refresh),
	);
}

async function balanceCards(ctx: PageContext, account: Account): Promise<Node> {
	const balance = await ctx.api.get<Balance>(`/accounts/${account.id}/balance`, undefined, ctx.signal);
	const card = (key: keyof Balance, label: string, value: number, hint: string) =>
		h(
			"div",
			{
				class: `metric${belowZero(value, balance.currency) ? " negative" : ""}`,
				"data-field": key,
				"data-value": value,
			},
			h("dt", null, label),
			h("dd", null, money(value, balance.currency), h("small", { class: "muted" }, hint)),
		);
	return h(
		"dl",
		{ class: "metrics", "aria-label": "Balance" },
		card("available", "Available", balance.available, "remaining of active grants"),
		card("pending_usage", "Accrued this period", balance.pending_usage, "usage and base fees so far"),
		card("projected", "Projected", balance.projected, "available − accrued"),
	);
}

async function grantTable(ctx: PageContext, account: Account, refresh: () => Promise<void>): Promise<Node> {
	const grants = await ctx.api.get<List<"credit_grants", CreditGrant>>(
		`/accounts/${account.id}/credit-grants`,
		{ limit: 100 },
		ctx.signal,
	);
	const problem = h("div");
	const rows = (grants.credit_grants ?? []).map((grant) => {
		let voidButton: HTMLButtonElement | null = null;
		if (grant.remaining > 0 && grant.status === "active" && ctx.identity.permission !== "read-only") {
			const button = h(
				"button",
				{ type: "button", class: "danger small", "aria-label": `Void grant ${grant.id}` },
				"Void",
			);
			button.addEventListener("click", async () => {
				const sure = await confirmAction(
					`Void the grant ${grant.description ?? grant.id}? Its remaining ${money(grant.remaining, grant.currency)} can no longer pay invoices.`,
					"Void grant",
					ctx.signal,
				);
				if (!sure) return;
				await runInto(problem, button, async () => {
					await ctx.api.post(`/accounts/${account.id}/credit-grants/${grant.id}/void`);
					await refresh();
					return null;
				});
			});
			voidButton = button;
		}
		return [
			grant.description ?? h("code", null, grant.id),
			badge(grant.status),
			h("span", { class: "num", "data-value": grant.amount }, money(grant.amount, grant.currency)),
			h(
				"span",
				{ class: "num", "data-grant-remaining": grant.id, "data-value": grant.remaining },
				money(grant.remaining, grant.currency),
			),
			h("span", { "data-grant-recurrence": grant.id }, recurrenceOf(grant)),
			when(grant.expires_at),
			when(grant.created_at),
			voidButton ?? "—",
		];
	});
	return h(
		"div",
		null,
		problem,
		table(
			["grant", "status", "granted", "remaining", "recurs", "expires", "created", "actions"],
			rows,
			"No credit granted yet. Credit pays new invoices first, the grant that expires earliest first.",
		),
	);
}

/** "monthly, rolls over up to USD 10.00", or "once". */
function recurrenceOf(grant: CreditGrant): string {
	if (grant.recurrence === null) return "once";
	return grant.rollover_max === null || grant.rollover_max === 0
		? grant.recurrence
		: `${grant.recurrence}, rolls over up to ${money(grant.rollover_max, grant.currency)}`;
}

function grantForm(ctx: PageContext, account: Account, refresh: () => Promise<void>): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Grant credit");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Grant credit" },
		field(
			`Amount (${account.currency})`,
			h("input", { name: "amount", type: "number", min: "0.01", step: "0.01", required: true, size: 8 }),
		),
		field("Expires (optional)", h("input", { name: "expires_at", type: "date" })),
		field(
			"Recurs",
			h(
				"select",
				{ name: "recurrence" },
				h("option", { value: "" }, "once"),
				h("option", { value: "monthly" }, "monthly"),
			),
		),
		field(
			`Rollover max (${account.currency}, monthly only)`,
			h("input", { name: "rollover_max", type: "number", min: "0", step: "0.01", size: 8 }),
		),
		field(
			"Description (optional)",
			h("input", { name: "description", maxlength: 200, placeholder: "e.g. prepaid Q1" }),
		),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const body: Record<string, unknown> = { amount: Number(values.amount) };
			if (values.expires_at) body.expires_at = `${values.expires_at}T23:59:59Z`;
			if (values.description) body.description = values.description;
			if (values.recurrence) body.recurrence = values.recurrence;
			if (values.rollover_max) body.rollover_max = Number(values.rollover_max);
			const grant = await ctx.api.post<CreditGrant>(`/accounts/${account.id}/credit-grants`, body);
			form.reset();
			await refresh();
			return h("p", { class: "ok" }, `Granted ${money(grant.amount, grant.currency)} (${grant.id}).`);
		});
	});
	return h("div", null, h("h3", null, "Grant credit"), form, result);
}
