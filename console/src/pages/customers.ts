/** Customers: accounts with their subscriptions, and one account with its subscriptions and invoices. */
import { mapLimited } from "../api";
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, h } from "../dom";
import { dateTime, day, money } from "../format";
import { nameOr, namesOf } from "../lookups";
import type { Account, Invoice, List, Subscription } from "../types";
import { badge, ident, link, pager, section, table, when } from "../ui";
import { creditSection } from "./credits";
import { totalsByCurrency } from "./currency-totals";
import { childrenSection, hierarchyFacts, hierarchyOf } from "./hierarchy";
import { paymentSettingsSection } from "./payment-settings";
import { portalLinkSection } from "./portal-link";

const PAGE = 20;

function subscriptionSummary(s: Subscription, plans: Map<string, string>): HTMLElement {
	return h(
		"div",
		{ class: "sub-summary", "data-subscription": s.id },
		badge(s.status),
		" ",
		nameOr(plans, s.rate_plan_id),
		h("span", { class: "muted" }, ` · ${s.agent_instance_ids.join(", ")}`),
	);
}

export async function customersPage(ctx: PageContext): Promise<void> {
	const offset = pageOffset(ctx.query);
	const [accounts, plans] = await Promise.all([
		ctx.api.get<List<"accounts", Account>>("/accounts", { limit: PAGE, offset }, ctx.signal),
		namesOf(ctx.api, "/pricing/rate-plans", "rate_plans", ctx.signal),
	]);
	// One request per account of this page (at most 20), since subscriptions are filtered by one account at a time.
	const subscriptions = await mapLimited(accounts.accounts, 6, (account) =>
		ctx.api.get<List<"subscriptions", Subscription>>(
			"/subscriptions",
			{ account_id: account.id, limit: 100 },
			ctx.signal,
		),
	);
	fill(
		ctx.view,
		h("h1", null, "Customers"),
		h("p", { class: "muted" }, `${accounts.total} account${accounts.total === 1 ? "" : "s"}.`),
		table(
			["account", "e-mail", "currency", "external id", "subscriptions", "created"],
			accounts.accounts.map((account, i) => [
				link(`#/customers/${account.id}`, account.name),
				account.email,
				account.currency,
				account.external_id ?? "—",
				(subscriptions[i]?.subscriptions ?? []).length === 0
					? h("span", { class: "muted" }, "none")
					: (subscriptions[i]?.subscriptions ?? []).map((s) => subscriptionSummary(s, plans)),
				ident(day(account.created_at)),
			]),
			"No accounts yet. Create them with POST /v1/accounts.",
		),
		pager(accounts, (next) => ctx.go(hashOf("/customers", { offset: next }))),
	);
}

export async function customerPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const [account, subscriptions, invoices, plans] = await Promise.all([
		ctx.api.get<Account>(`/accounts/${id}`, undefined, ctx.signal),
		ctx.api.get<List<"subscriptions", Subscription>>(
			"/subscriptions",
			{ account_id: id, limit: 100 },
			ctx.signal,
		),
		ctx.api.get<List<"invoices", Invoice>>("/invoices", { account_id: id, limit: 20 }, ctx.signal),
		namesOf(ctx.api, "/pricing/rate-plans", "rate_plans", ctx.signal),
	]);
	const hierarchy = await hierarchyOf(ctx, account);
	const address = account.billing_address
		? Object.values(account.billing_address).filter(Boolean).join(", ")
		: "—";
	fill(
		ctx.view,
		h("p", { class: "crumbs" }, link("#/customers", "Customers"), " / ", account.id),
		h("h1", null, account.name),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "E-mail"),
			h("dd", null, account.email),
			h("dt", null, "Currency"),
			h("dd", null, account.currency),
			h("dt", null, "External id"),
			h("dd", null, account.external_id ?? "—"),
			h("dt", null, "Billing address"),
			h("dd", null, address),
			h("dt", null, "Created"),
			h("dd", null, dateTime(account.created_at)),
			...hierarchyFacts(account, hierarchy.parentName),
		),
		childrenSection(hierarchy),
		section(
			"Subscriptions",
			table(
				["subscription", "status", "rate plan", "instances", "started", "cancelled"],
				subscriptions.subscriptions.map((s) => [
					link(`#/subscriptions/${s.id}`, s.id, { class: "code" }),
					badge(s.status),
					[
						nameOr(plans, s.rate_plan_id),
						s.pending_rate_plan_id &&
							h("small", { class: "muted" }, ` → ${nameOr(plans, s.pending_rate_plan_id)} next period`),
					],
					s.agent_instance_ids.join(", "),
					when(s.started_at),
					when(s.cancelled_at),
				]),
				"No subscriptions.",
			),
		),
		creditSection(ctx, account),
		paymentSettingsSection(ctx, account),
		ctx.identity.permission === "read-only" ? null : portalLinkSection(ctx, account.id),
		section(
			"Latest invoices",
			table(
				["number", "period", "kind", "status", "amount"],
				invoices.invoices.map((invoice) => [
					ident(link(`#/invoices/${invoice.id}`, invoice.number ?? "Draft")),
					ident(invoice.billing_period),
					invoice.kind,
					badge(invoice.status),
					h("span", { class: "num" }, money(invoice.amount, invoice.currency)),
				]),
				"No invoices.",
			),
			totalsByCurrency(invoices.invoices),
			invoices.total > invoices.invoices.length &&
				link(hashOf("/invoices", { account_id: id }), `All ${invoices.total} invoices →`),
		),
	);
}
