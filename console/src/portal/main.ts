/**
 * The customer portal's page (/portal): what an operator's customer sees through a link minted for their account.
 * The link carries its token in the fragment (#token=pst_…), which browsers never send to a server; the page takes
 * it from there, removes it from the address bar and history at once, and keeps it for this tab only
 * (sessionStorage) so that a reload still works. Everything shown comes from /portal/api with that token.
 */
import { Api, ApiFailure } from "../api";
import { type Child, fill, h } from "../dom";
import { belowZero, dateTime, day, money, quantity } from "../format";
import { badge, errorBox, loading, section, table } from "../ui";
import { creditNoteSection, invoiceSection, paymentSection } from "./documents";
import type {
	PortalAlert,
	PortalCreditNotes,
	PortalInvoices,
	PortalOverview,
	PortalPayments,
	PortalSubscription,
} from "./types";

const STORAGE_KEY = "portal-token";
const TOKEN = /^pst_[A-Za-z0-9_-]{20,200}$/;

/** The token from the fragment (then gone from the address bar and history), else the one this tab kept. */
function takeToken(): string | null {
	const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
	if (fromHash !== null) {
		history.replaceState(null, "", location.pathname + location.search);
		if (TOKEN.test(fromHash)) {
			sessionStorage.setItem(STORAGE_KEY, fromHash);
			return fromHash;
		}
		sessionStorage.removeItem(STORAGE_KEY);
		return null;
	}
	return sessionStorage.getItem(STORAGE_KEY);
}

function notice(title: string, ...body: Child[]): HTMLElement {
	return h(
		"main",
		{ id: "main", class: "portal-main" },
		h("h1", null, title),
		h("div", { class: "card notice" }, ...body),
	);
}

/** What the reader can do about a failure, in words: an expired link, no connection, or the API's own message. */
function failure(error: unknown, retry: () => void): HTMLElement {
	if (error instanceof ApiFailure && error.status === 401) {
		sessionStorage.removeItem(STORAGE_KEY);
		return notice(
			"This link has expired",
			h("p", { role: "alert" }, "Links to this page work for a limited time, and can be withdrawn."),
			h("p", null, "Ask your provider for a new link to see your usage and invoices."),
		);
	}
	const unreachable = error instanceof ApiFailure && error.status === 0;
	return notice(
		unreachable ? "The billing service cannot be reached" : "Something went wrong",
		unreachable ? h("p", { role: "alert" }, "Check your connection, then try again.") : errorBox(error),
		h("button", { type: "button", class: "primary", onclick: retry }, "Try again"),
	);
}

function subscriptionCard(s: PortalSubscription): HTMLElement {
	const format = (n: number) => money(n, s.currency);
	return h(
		"article",
		{ class: "card subscription", "data-subscription": s.id },
		h("h3", null, s.rate_plan_name, " ", badge(s.status)),
		h(
			"p",
			{ class: "so-far" },
			h("span", { class: "muted" }, "Amount so far "),
			h("strong", { class: "amount-so-far", "data-value": s.amount_so_far }, format(s.amount_so_far)),
		),
		s.cancel_at && h("p", { class: "muted" }, `Ends ${day(s.cancel_at)}.`),
		table(
			["charge", "quantity", "amount"],
			s.charges.map((charge) => [
				h("span", { class: "charge" }, chargeName(s, charge.metric)),
				h("span", { class: "num" }, quantity(charge.quantity)),
				h("span", { class: "num" }, format(charge.amount)),
			]),
			"No charges yet this period.",
		),
		s.usage.length > 0 &&
			h(
				"details",
				null,
				h("summary", null, "Usage this period"),
				table(
					["kind", "type", "count", "value"],
					s.usage.map((line) => [
						line.kind,
						h("code", null, line.type),
						h("span", { class: "num" }, quantity(line.count)),
						line.value === null ? "—" : h("span", { class: "num" }, quantity(line.value)),
					]),
				),
			),
	);
}

/** What the invoice calls a charge: never its metric id, unless an older API gave no description. */
function chargeName(s: PortalSubscription | undefined, metric: string): string {
	return s?.charge_descriptions?.[metric] ?? metric.replace(/[_.:-]+/g, " ");
}

function alertRows(alerts: PortalAlert[], subscriptions: PortalSubscription[]): Child[][] {
	const byId = new Map(subscriptions.map((s) => [s.id, s]));
	return alerts.map((alert) => [
		alert.name ?? "—",
		alert.metric === null ? "Total amount" : chargeName(byId.get(alert.subscription_id), alert.metric),
		h(
			"span",
			{ class: "num" },
			alert.metric === null
				? money(alert.threshold, byId.get(alert.subscription_id)?.currency ?? "USD")
				: quantity(alert.threshold),
		),
		// One element a cell: a narrow screen lays each cell out as "label  value".
		h(
			"span",
			null,
			badge(alert.status),
			alert.block
				? h(
						"small",
						{ class: "muted block-note" },
						" · once reached, further usage is refused until the next period",
					)
				: null,
		),
		alert.triggered_at ? dateTime(alert.triggered_at) : "—",
	]);
}

/**
 * The prepaid credit left, and only where there is some, what would be left once this period's usage not yet
 * invoiced is billed. The period's amount itself stands once, on its subscription.
 */
function creditCards(credits: PortalOverview["credits"]): HTMLElement | null {
	if (credits.available <= 0) return null;
	const card = (label: string, value: number, hint: string, field: string) =>
		h(
			"div",
			{
				class: `metric${belowZero(value, credits.currency) ? " negative" : ""}`,
				"data-field": field,
				"data-value": value,
			},
			h("dt", null, label),
			h("dd", null, money(value, credits.currency), h("small", { class: "muted" }, hint)),
		);
	return h(
		"dl",
		{ class: "metrics", "aria-label": "Credit balance" },
		card("Available", credits.available, "prepaid credit left", "available"),
		card("After this period", credits.projected, "once usage not yet invoiced is billed", "projected"),
	);
}

function render(
	root: HTMLElement,
	api: Api,
	overview: PortalOverview,
	invoices: PortalInvoices,
	payments: PortalPayments,
	creditNotes: PortalCreditNotes,
) {
	const { account, credits } = overview;
	document.title = `${account.name} · ${overview.seller}`;
	fill(
		root,
		h(
			"header",
			{ class: "portal-top" },
			h("p", { class: "seller" }, overview.seller),
			h("p", { class: "muted" }, "Billing portal"),
		),
		h(
			"main",
			{ id: "main", class: "portal-main" },
			h("h1", { class: "account-name" }, account.name),
			h("p", { class: "muted" }, account.email, ` · amounts in ${account.currency}`),
			section(
				`This period (${overview.billing_period})`,
				overview.subscriptions.length === 0
					? h("p", { class: "muted empty" }, "No active subscription this period.")
					: h("div", { class: "subscriptions" }, overview.subscriptions.map(subscriptionCard)),
			),
			section(
				"Budgets and alerts",
				table(
					["name", "on", "threshold", "status", "reached"],
					alertRows(overview.alerts, overview.subscriptions),
					"No budgets or alerts are set.",
				),
			),
			section(
				"Credit",
				creditCards(credits),
				table(
					["grant", "amount", "remaining", "status", "expires"],
					credits.grants.map((grant) => [
						grant.description ?? day(grant.created_at),
						h("span", { class: "num" }, money(grant.amount, grant.currency)),
						h("span", { class: "num" }, money(grant.remaining, grant.currency)),
						badge(grant.status),
						grant.expires_at ? day(grant.expires_at) : "never",
					]),
					"No prepaid credit.",
				),
			),
			invoiceSection(api, invoices),
			creditNoteSection(api, creditNotes, invoices),
			paymentSection(payments, invoices),
		),
		h(
			"footer",
			{ class: "portal-foot muted" },
			`Times are in UTC. This page is read-only and provided by ${overview.seller}.`,
		),
	);
}

async function show(root: HTMLElement, token: string): Promise<void> {
	fill(root, h("main", { id: "main", class: "portal-main" }, loading("Loading your account…")));
	const api = new Api(token, "/portal/api");
	try {
		const [overview, invoices, payments, creditNotes] = await Promise.all([
			api.get<PortalOverview>("/overview"),
			api.get<PortalInvoices>("/invoices", { limit: 100 }),
			api.get<PortalPayments>("/payments", { limit: 100 }),
			api.get<PortalCreditNotes>("/credit-notes", { limit: 100 }),
		]);
		render(root, api, overview, invoices, payments, creditNotes);
	} catch (error) {
		fill(
			root,
			failure(error, () => void show(root, token)),
		);
	}
}

const root = document.getElementById("app") as HTMLElement;
const token = takeToken();
if (token === null) {
	fill(
		root,
		notice(
			"Open your billing link",
			h("p", null, "This page shows an account's usage and invoices to whoever holds its link."),
			h("p", null, "Open the full link you were sent, or ask your provider for a new one."),
		),
	);
} else {
	void show(root, token);
}
