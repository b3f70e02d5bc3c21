/**
 * The console's shell: sign-in, the header with the key's environment and permission, the navigation, and a
 * hash router (#/invoices/inv_…) so that the server only ever serves one static page.
 */
import { ApiFailure } from "./api";
import { destroyCharts } from "./charts";
import type { PageContext } from "./context";
import { fill, h } from "./dom";
import { agentPage, agentsPage } from "./pages/agents";
import { apiKeysPage } from "./pages/api-keys";
import { auditLogPage } from "./pages/audit-log";
import { couponsPage } from "./pages/coupons";
import { customerPage, customersPage } from "./pages/customers";
import { eventsPage } from "./pages/events";
import { exchangeRatesPage } from "./pages/exchange-rates";
import { invoicePage } from "./pages/invoice";
import { invoicesPage } from "./pages/invoices";
import { liveMarginsPage } from "./pages/live-margins";
import { marginsPage } from "./pages/margins";
import { overviewPage } from "./pages/overview";
import { paymentsPage } from "./pages/payments";
import { ratePlanPage } from "./pages/rate-plan";
import { signInPage } from "./pages/sign-in";
import { subscriptionPage } from "./pages/subscription";
import { unbilledPage } from "./pages/unbilled";
import { webhookPage } from "./pages/webhook";
import { webhooksPage } from "./pages/webhooks";
import { forgetKey, type Identity, identify, storedKey, storeKey } from "./session";
import { errorBox, loading } from "./ui";

interface Route {
	pattern: RegExp;
	title: string;
	/** The navigation entry that is highlighted. */
	nav: string;
	page: (ctx: PageContext) => Promise<void> | void;
}

const ID = "([A-Za-z0-9_]+)";
const routes: Route[] = [
	{ pattern: /^\/overview$/, title: "Overview", nav: "overview", page: overviewPage },
	{ pattern: /^\/customers$/, title: "Customers", nav: "customers", page: customersPage },
	{ pattern: new RegExp(`^/customers/${ID}$`), title: "Customer", nav: "customers", page: customerPage },
	{ pattern: /^\/invoices$/, title: "Invoices", nav: "invoices", page: invoicesPage },
	{ pattern: new RegExp(`^/invoices/${ID}$`), title: "Invoice", nav: "invoices", page: invoicePage },
	{ pattern: /^\/agents$/, title: "Agents", nav: "agents", page: agentsPage },
	{ pattern: new RegExp(`^/agents/${ID}$`), title: "Agent", nav: "agents", page: agentPage },
	{ pattern: /^\/margins$/, title: "Margins", nav: "margins", page: marginsPage },
	{ pattern: /^\/margins\/live$/, title: "Live margins", nav: "live-margins", page: liveMarginsPage },
	{ pattern: /^\/events$/, title: "Events", nav: "events", page: eventsPage },
	{ pattern: /^\/usage\/unbilled$/, title: "Unbilled usage", nav: "unbilled", page: unbilledPage },
	{ pattern: /^\/payments$/, title: "Payments", nav: "payments", page: paymentsPage },
	{ pattern: /^\/coupons$/, title: "Coupons", nav: "coupons", page: couponsPage },
	{ pattern: /^\/exchange-rates$/, title: "Exchange rates", nav: "exchange-rates", page: exchangeRatesPage },
	{ pattern: new RegExp(`^/rate-plans/${ID}$`), title: "Rate plan", nav: "customers", page: ratePlanPage },
	{
		pattern: new RegExp(`^/subscriptions/${ID}$`),
		title: "Subscription",
		nav: "customers",
		page: subscriptionPage,
	},
	{ pattern: /^\/settings\/api-keys$/, title: "API keys", nav: "api-keys", page: apiKeysPage },
	{ pattern: /^\/settings\/webhooks$/, title: "Webhooks", nav: "webhooks", page: webhooksPage },
	{ pattern: /^\/settings\/audit-log$/, title: "Audit log", nav: "audit-log", page: auditLogPage },
	{ pattern: new RegExp(`^/settings/webhooks/${ID}$`), title: "Webhook", nav: "webhooks", page: webhookPage },
];

const NAV: [string, string, string][] = [
	["overview", "#/overview", "Overview"],
	["margins", "#/margins", "Margins"],
	["live-margins", "#/margins/live", "Live margins"],
	["customers", "#/customers", "Customers"],
	["invoices", "#/invoices", "Invoices"],
	["payments", "#/payments", "Payments"],
	["coupons", "#/coupons", "Coupons"],
	["exchange-rates", "#/exchange-rates", "Exchange rates"],
	["agents", "#/agents", "Agents"],
	["events", "#/events", "Events"],
	["unbilled", "#/usage/unbilled", "Unbilled usage"],
	["api-keys", "#/settings/api-keys", "Settings → API keys"],
	["webhooks", "#/settings/webhooks", "Settings → Webhooks"],
	["audit-log", "#/settings/audit-log", "Settings → Audit log"],
];

/** Pages that only admin keys may open (the API answers 403 to the others, and the page shows its words). */
const ADMIN_ONLY = { "api-keys": true, webhooks: true, "audit-log": true };

const root = document.getElementById("app") as HTMLElement;
let identity: Identity | null = null;
let leaving: AbortController | null = null;

function signedIn(who: Identity): void {
	identity = who;
	storeKey(who.key);
	if (location.hash === "" || location.hash === "#/sign-in") location.hash = "#/overview";
	else render();
}

function signOut(): void {
	leaving?.abort();
	identity = null;
	forgetKey();
	destroyCharts();
	history.replaceState(null, "", location.pathname);
	signInPage(root, signedIn);
}

/** On a narrow screen the navigation folds behind this button; on a wide one the button is hidden. */
function menuButton(): HTMLButtonElement {
	const button = h(
		"button",
		{ type: "button", class: "menu", "aria-expanded": "false", "aria-controls": "sections" },
		"Menu",
	);
	button.addEventListener("click", () => {
		const open = button.getAttribute("aria-expanded") !== "true";
		button.setAttribute("aria-expanded", String(open));
		document.getElementById("sections")?.classList.toggle("open", open);
	});
	return button;
}

function header(who: Identity): HTMLElement {
	const environment = who.environment ?? "unknown";
	return h(
		"header",
		{ class: "top" },
		menuButton(),
		h("a", { class: "brand", href: "#/overview" }, "Agent Metering & Billing"),
		h(
			"span",
			{
				class: `env env-${environment}`,
				"data-environment": environment,
				title: who.environment
					? `Everything shown belongs to the ${who.environment} environment of this key.`
					: "A non-admin key cannot see its environment through the API.",
			},
			who.environment ? who.environment.toUpperCase() : "ENVIRONMENT NOT VISIBLE TO THIS KEY",
		),
		h(
			"span",
			{ class: "who", "data-permission": who.permission ?? "unknown" },
			`${who.permission ?? "unknown"} key · ${who.label}`,
		),
		h("a", { class: "switch", href: "#/sign-in" }, "Switch key"),
		h("button", { type: "button", class: "sign-out", onclick: signOut }, "Sign out"),
	);
}

function render(): void {
	const who = identity;
	if (!who) return;
	leaving?.abort();
	destroyCharts();
	const [path = "/overview", queryText = ""] = location.hash.replace(/^#/, "").split("?", 2);
	if (path === "/sign-in") {
		signInPage(root, signedIn, { current: who });
		return;
	}
	const route = routes.find((r) => r.pattern.test(path));
	// data-route and data-state tell an observer (the browser tests, a screen reader's user) when a page is drawn.
	const view = h("main", { id: "main", tabindex: "-1", "data-route": path, "aria-busy": "true" });
	fill(
		root,
		header(who),
		h(
			"div",
			{ class: "layout" },
			h(
				"nav",
				{ class: "side", id: "sections", "aria-label": "Sections" },
				NAV.map(([key, href, label]) =>
					h(
						"a",
						{ href, "aria-current": route?.nav === key ? "page" : null },
						label,
						key in ADMIN_ONLY &&
							who.permission !== "admin" &&
							h("small", { class: "muted" }, " (admin keys)"),
					),
				),
			),
			view,
		),
	);
	if (!route) {
		fill(
			view,
			h("h1", null, "Not found"),
			h("p", null, "There is no such page. "),
			h("a", { href: "#/overview" }, "Overview"),
		);
		view.setAttribute("data-state", "failed");
		view.removeAttribute("aria-busy");
		return;
	}
	document.title = `${route.title} · Agent Metering & Billing`;
	leaving = new AbortController();
	const ctx: PageContext = {
		api: who.api,
		identity: who,
		params: route.pattern.exec(path)?.slice(1) ?? [],
		query: new URLSearchParams(queryText),
		view,
		signal: leaving.signal,
		go: (hash) => {
			location.hash = hash;
		},
		refresh: render,
	};
	Promise.resolve()
		.then(() => route.page(ctx))
		.then(() => view.setAttribute("data-state", "ready"))
		.catch((error: unknown) => {
			if (ctx.signal.aborted) return;
			fill(view, h("h1", null, route.title), errorBox(error));
			view.setAttribute("data-state", "failed");
		})
		.finally(() => view.removeAttribute("aria-busy"));
}

async function boot(): Promise<void> {
	window.addEventListener("hashchange", render);
	const key = storedKey();
	if (!key) {
		signInPage(root, signedIn);
		return;
	}
	await checkStoredKey(key);
}

/**
 * Checks the key kept in this tab. Only the API's 401 (the key is unknown or revoked) forgets it; anything else
 * (the API unreachable, a 5xx, a rate limit) is shown with a retry, and the key stays.
 */
async function checkStoredKey(key: string): Promise<void> {
	fill(root, loading("Checking your key…"));
	try {
		signedIn(await identify(key));
	} catch (problem) {
		if (problem instanceof ApiFailure && problem.status === 401) {
			forgetKey();
			signInPage(root, signedIn, { problem });
			return;
		}
		const retry = h("button", { type: "button", class: "primary" }, "Retry");
		retry.addEventListener("click", () => void checkStoredKey(key));
		fill(
			root,
			h(
				"div",
				{ class: "sign-in-page boot-problem", role: "region", "aria-label": "The console could not start" },
				h("h1", null, "Agent Metering & Billing"),
				h("h2", null, "The API could not be reached to check your key."),
				errorBox(problem),
				h(
					"p",
					null,
					"Your key is still kept in this tab. Retry when the service is back, or sign out to forget it.",
				),
				h(
					"div",
					{ class: "actions" },
					retry,
					h("button", { type: "button", class: "sign-out", onclick: signOut }, "Sign out"),
				),
			),
		);
		retry.focus();
	}
}

void boot();
