// The console's pages for exchange rates, a rate plan's versions and a subscription's plan change
// (docs/console.md), in headless Chromium against `wrangler dev` on port 8851: npx node test/console/contracts.mjs
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, signInToConsole, startBrowser } from "./harness.mjs";

const PORT = Number(process.env.CONSOLE_TEST_PORT ?? 8851);
const hardStop = setTimeout(() => {
	console.error("console contract tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

let worker;
let browser;
let page;
let api;
let plan;
let other;
let subscription;
let account;

const planBody = (name, base_fee) => ({
	name,
	base_fee,
	charges: [
		{
			metric: "llm_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.25,
		},
	],
});

before(async () => {
	worker = await startWorker({ port: PORT });
	api = apiClient(worker.base, worker.adminKey);
	await api("POST", "/exchange-rates", {
		base: "USD",
		quote: "EUR",
		rate: 0.9,
		effective_at: "2026-01-01T00:00:00Z",
	});
	await api("POST", "/exchange-rates", {
		base: "USD",
		quote: "EUR",
		rate: 0.92,
		effective_at: "2026-06-01T00:00:00Z",
	});
	plan = await api("POST", "/pricing/rate-plans", planBody("Scale", 20));
	other = await api("POST", "/pricing/rate-plans", planBody("Growth", 90));
	account = await api("POST", "/accounts", { name: "Initech", email: "ap@initech.example" });
	subscription = await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: ["initech-bot-1"],
	});
	await api("POST", `/pricing/rate-plans/${plan.id}/versions`, planBody("Scale", 50));
	browser = await startBrowser();
	page = browser.page;
	await signInToConsole(page, worker.base, worker.adminKey);
});

after(async () => {
	await browser?.stop();
	await worker?.stop();
	clearTimeout(hardStop);
});

const open = (hash) => openConsoleRoute(page, worker.base, hash);
const rateRows = () => page.locator("[data-exchange-rates] tbody tr");

describe("exchange rates", { timeout: 200_000 }, () => {
	it("lists the rates newest effective first, from the navigation", async () => {
		await open("#/overview");
		await page.click("nav a:has-text('Exchange rates')");
		await page.waitForSelector("[data-exchange-rates] table");
		assert.equal(await page.locator("nav a[aria-current=page]").textContent(), "Exchange rates");
		assert.equal(await rateRows().count(), 2);
		const first = await rateRows().first().textContent();
		assert.match(first, /1 USD = 0\.92 EUR/);
		assert.match(first, /2026-06-01/);
		assert.match(await rateRows().nth(1).textContent(), /1 USD = 0\.9 EUR/);
	});

	it("adds a rate with the form, and shows the API's error for a bad one", async () => {
		await open("#/exchange-rates");
		const form = page.locator("form[aria-label='Add an exchange rate']");
		await form.locator("input[name=base]").fill("usd");
		await form.locator("input[name=quote]").fill("usd");
		await form.locator("input[name=rate]").fill("1.5");
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("form[aria-label='Add an exchange rate'] [role=alert]");
		assert.match(await form.textContent(), /quote must differ from base/);
		assert.equal(await rateRows().count(), 2, "nothing was added");

		await form.locator("input[name=quote]").fill("gbp");
		await form.locator("input[name=rate]").fill("0.79");
		await form.locator("input[name=effective_at]").fill("2026-11-01T00:00");
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("form[aria-label='Add an exchange rate'] .ok");
		assert.match(await form.locator(".ok").textContent(), /1 USD = 0\.79 GBP from 2026-11-01T00:00/);
		assert.equal(await rateRows().count(), 3);
		assert.match(await rateRows().first().textContent(), /USD → GBP/);
		const stored = await api("GET", "/exchange-rates?base=USD&quote=GBP&at=2026-11-02T00:00:00Z");
		assert.equal(stored.rate, 0.79);
		assert.equal(stored.effective_at, "2026-11-01T00:00:00.000Z");
		assert.deepEqual(browser.problems, []);
	});
});

describe("a rate plan's versions", { timeout: 200_000 }, () => {
	it("lists each version with its active subscriptions, and migrates them", async () => {
		await open(`#/subscriptions/${subscription.id}`);
		await page.click(`dd a[href='#/rate-plans/${plan.id}']`);
		await page.waitForSelector("[data-plan-versions] table");
		const versions = page.locator("[data-plan-versions] tbody tr");
		assert.equal(await versions.count(), 2);
		assert.match(await versions.first().textContent(), /v2 \(latest\)/);
		assert.equal(await page.locator("[data-version-subscriptions='1']").textContent(), "1");
		assert.equal(await page.locator("[data-version-subscriptions='2']").textContent(), "0");

		const form = page.locator("form[aria-label='Migrate subscriptions']");
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("[data-migrated]");
		assert.equal(await page.locator("[data-migrated]").getAttribute("data-migrated"), "1");
		assert.match(await page.locator("[data-migrated]").textContent(), /1 subscription moved/);
		const stored = await api("GET", `/subscriptions/${subscription.id}`);
		assert.equal(stored.pending_plan_change.version, 2);

		await form.locator("button[type=submit]").click();
		await page.waitForSelector("[data-migrated='0']");
		assert.deepEqual(browser.problems, []);
	});
});

describe("a subscription's plan and billing terms", { timeout: 200_000 }, () => {
	it("shows its version, pending change, currency and threshold, and edits them", async () => {
		await open(`#/subscriptions/${subscription.id}`);
		assert.match(await page.locator("[data-plan-version]").textContent(), /Scale v1/);
		assert.match(await page.locator("[data-pending-plan-change]").textContent(), /Scale v2 from/);
		assert.equal(await page.locator("[data-billing-currency]").textContent(), "USD");
		assert.equal(await page.locator("[data-invoicing-threshold]").textContent(), "none");
		await page.waitForSelector("[data-upcoming-amount]");
		assert.match(await page.locator("[data-upcoming-amount]").textContent(), /so far/);

		const threshold = page.locator("form[aria-label='Invoicing threshold']");
		await threshold.locator("input[name=threshold]").fill("0");
		await threshold.locator("button[type=submit]").click();
		await page.waitForSelector("form[aria-label='Invoicing threshold'] [role=alert]");
		assert.equal((await api("GET", `/subscriptions/${subscription.id}`)).invoicing_threshold, null);
		await threshold.locator("input[name=threshold]").fill("250");
		await threshold.locator("button[type=submit]").click();
		await page.waitForSelector("form[aria-label='Invoicing threshold'] .ok");
		assert.match(await page.locator("[data-invoicing-threshold]").textContent(), /250\.00/);
		assert.equal((await api("GET", `/subscriptions/${subscription.id}`)).invoicing_threshold, 250);

		const change = page.locator("form[aria-label='Change plan']");
		await change.locator("select[name=rate_plan_id]").selectOption(other.id);
		await change.locator("button[type=submit]").click();
		await page.waitForSelector("form[aria-label='Change plan'] .ok");
		assert.match(await page.locator("[data-pending-plan-change]").textContent(), /Growth v1 from/);
		const stored = await api("GET", `/subscriptions/${subscription.id}`);
		assert.deepEqual([stored.pending_plan_change.rate_plan_id, stored.rate_plan_id], [other.id, plan.id]);

		// Now: the subscription moves at once and the current period splits (docs/plan-versions.md#changing-now).
		await change.locator("select[name=at]").selectOption("now");
		await change.locator("button[type=submit]").click();
		await page.waitForFunction(() =>
			/Growth v1/.test(document.querySelector("[data-plan-version]")?.textContent ?? ""),
		);
		assert.match(await page.locator("form[aria-label='Change plan'] .ok").textContent(), /billed in parts/);
		assert.equal(await page.locator("[data-pending-plan-change]").textContent(), "none");
		const moved = await api("GET", `/subscriptions/${subscription.id}`);
		assert.deepEqual([moved.rate_plan_id, moved.pending_plan_change], [other.id, null]);
		assert.deepEqual(browser.problems, []);
	});
});

describe("credit grants", { timeout: 200_000 }, () => {
	it("grants a monthly credit with a rollover cap, and shows both", async () => {
		await open(`#/customers/${account.id}`);
		const form = page.locator("form[aria-label='Grant credit']");
		await form.locator("input[name=amount]").fill("40");
		await form.locator("select[name=recurrence]").selectOption("monthly");
		await form.locator("input[name=rollover_max]").fill("10");
		await form.locator("input[name=description]").fill("Monthly allowance");
		await page.click("button:has-text('Grant credit')");
		await page.waitForSelector("tr:has-text('Monthly allowance')");
		const row = page.locator("tr", { hasText: "Monthly allowance" });
		assert.match(await row.textContent(), /monthly, rolls over up to \$10\.00/);
		const grants = await api("GET", `/accounts/${account.id}/credit-grants`);
		const grant = grants.credit_grants.find((g) => g.description === "Monthly allowance");
		assert.deepEqual([grant.recurrence, grant.rollover_max, grant.amount], ["monthly", 10, 40]);
		assert.deepEqual(browser.problems, []);
	});
});

describe("an account billed in two currencies", { timeout: 200_000 }, () => {
	it("totals its invoices per currency, never across them", async () => {
		const globex = await api("POST", "/accounts", { name: "Globex", email: "ap@globex.example" });
		for (const billing_currency of ["USD", "EUR"]) {
			await api("POST", "/subscriptions", {
				account_id: globex.id,
				rate_plan_id: other.id,
				agent_instance_ids: [`globex-${billing_currency}`],
				billing_currency,
			});
		}
		const period = new Date().toISOString().slice(0, 7);
		await api("POST", "/invoices/generate", { billing_period: period, account_id: globex.id });
		const { invoices } = await api("GET", `/invoices?account_id=${globex.id}`);
		assert.deepEqual(invoices.map((i) => i.currency).sort(), ["EUR", "USD"]);

		await open(`#/customers/${globex.id}`);
		const totals = page.locator("[data-currency-totals] tbody tr");
		assert.equal(await totals.count(), 2);
		for (const invoice of invoices) {
			const shown = await page.locator("tr", { hasText: invoice.number }).locator("td").last().textContent();
			assert.equal(await page.locator(`[data-total-billed='${invoice.currency}']`).textContent(), shown);
		}
		assert.match(await page.locator("[data-total-billed='EUR']").textContent(), /€/);
		assert.deepEqual(browser.problems, []);
	});
});

describe("exchange rates, paged", { timeout: 200_000 }, () => {
	it("shows 20 rates a page, the older ones on the next", async () => {
		for (let day = 1; day <= 20; day++) {
			const effective_at = `2025-01-${String(day).padStart(2, "0")}T00:00:00Z`;
			await api("POST", "/exchange-rates", { base: "USD", quote: "JPY", rate: 150 + day, effective_at });
		}
		const { total } = await api("GET", "/exchange-rates?limit=1");
		assert.equal(total, 23);
		await open("#/exchange-rates");
		assert.equal(await rateRows().count(), 20);
		assert.match(await page.locator("[data-exchange-rates] nav.pager").textContent(), /1–20 of 23/);
		await page.click("[data-exchange-rates] button:has-text('Older →')");
		await page.waitForSelector("[data-exchange-rates] nav.pager:has-text('21–23 of 23')");
		assert.equal(await rateRows().count(), 3);
		assert.match(await rateRows().last().textContent(), /1 USD = 151 JPY/);
		assert.deepEqual(browser.problems, []);
	});
});
