// The console's pages for exchange rates, a rate plan's versions and a subscription's plan change
// (docs/console.md), in headless Chromium against `wrangler dev` on port 8851: npx node test/console/contracts.mjs
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, signInToConsole, startBrowser } from "./harness.mjs";

const PORT = 8851;
const hardStop = setTimeout(() => {
	console.error("console contract tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

let worker;
let browser;
let page;
let api;

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
