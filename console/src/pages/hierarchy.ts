/**
 * An account's place in a hierarchy (docs/account-hierarchies.md): its parent and who pays its invoices, its
 * children, and the children's invoices it pays. Read with the account page's other requests.
 */
import type { PageContext } from "../context";
import { h } from "../dom";
import { money } from "../format";
import type { Account, Invoice, List } from "../types";
import { badge, ident, link, section, table } from "../ui";

export interface Hierarchy {
	parentName: string | null;
	children: Account[];
	/** Invoices of other accounts (its children) that this account pays. */
	paysFor: Invoice[];
}

export async function hierarchyOf(ctx: PageContext, account: Account): Promise<Hierarchy> {
	const id = account.id;
	const [parent, children, paid] = await Promise.all([
		account.parent_account_id
			? ctx.api.get<Account>(`/accounts/${account.parent_account_id}`, undefined, ctx.signal)
			: null,
		ctx.api.get<List<"accounts", Account>>("/accounts", { parent_account_id: id, limit: 100 }, ctx.signal),
		ctx.api.get<List<"invoices", Invoice>>("/invoices", { payer_account_id: id, limit: 20 }, ctx.signal),
	]);
	return {
		parentName: parent?.name ?? null,
		children: children.accounts,
		paysFor: paid.invoices.filter((invoice) => invoice.account_id !== id),
	};
}

/** Parent, payer and shared credits, as rows of the account's facts. */
export function hierarchyFacts(account: Account, parentName: string | null): HTMLElement[] {
	if (!account.parent_account_id) return [];
	const parent = link(`#/customers/${account.parent_account_id}`, parentName ?? account.parent_account_id);
	return [
		h("dt", null, "Parent account"),
		h("dd", null, parent),
		h("dt", null, "Paid by"),
		h("dd", null, account.billing === "parent" ? ["the parent, ", parentName ?? ""] : "itself"),
		h("dt", null, "Parent's credits"),
		h("dd", null, account.use_parent_credits ? "used after its own" : "not used"),
	];
}

export function childrenSection(hierarchy: Hierarchy): HTMLElement | null {
	if (hierarchy.children.length === 0 && hierarchy.paysFor.length === 0) return null;
	return section(
		"Child accounts",
		table(
			["account", "paid by", "parent's credits"],
			hierarchy.children.map((child) => [
				link(`#/customers/${child.id}`, child.name),
				child.billing === "parent" ? "this account" : "itself",
				child.use_parent_credits ? "used" : "not used",
			]),
			"No child accounts.",
		),
		hierarchy.paysFor.length > 0 &&
			table(
				["invoice it pays", "account", "status", "amount due"],
				hierarchy.paysFor.map((invoice) => [
					ident(link(`#/invoices/${invoice.id}`, invoice.number ?? "Draft")),
					link(`#/customers/${invoice.account_id}`, invoice.account_id, { class: "code" }),
					badge(invoice.status),
					h("span", { class: "num" }, money(invoice.amount_due, invoice.currency)),
				]),
				"",
			),
	);
}
