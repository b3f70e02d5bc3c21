// The console's coupons page and a subscription's prices and discount (docs/discounts.md), in headless Chromium
// against `wrangler dev`: npx node test/console/coupons.mjs
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, signInToConsole, startBrowser } from "./harness.mjs";

const hardStop = setTimeout(() => {
	console.error("console coupon tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

let worker;
let browser;
let page;
let api;
let subscription;
const code = `SPRING${Date.now().toString(36).toUpperCase()}`;
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

before(async () => {
	worker = await startWorker();
	api = apiClient(worker.base, worker.adminKey);
	const account = await api("POST", "/accounts", { name: "Initech", email: "ap@initech.example" });
	const plan = await api("POST", "/pricing/rate-plans", {
		name: "Scale",
		base_fee: 100,
		charges: [
			{
				metric: "llm_calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.25,
			},
		],
	});
	subscription = await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: ["initech-bot-1"],
		price_overrides: [{ metric: "llm_calls", model: "per_unit", unit_price: 0.2 }],
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

async function seriousViolations() {
	// Evaluated, not injected as a script tag: the console's CSP allows no inline script.
	if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
	return page.evaluate(async () =>
		(await window.axe.run(document)).violations
			.filter((v) => v.impact === "serious" || v.impact === "critical")
			.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
	);
}

describe("coupons in the console", { timeout: 200_000 }, () => {
	it("creates a coupon and lists it as the API does", { timeout: 60_000 }, async () => {
		await open("#/coupons");
		const form = "form[aria-label='Create a coupon']";
		await page.fill(`${form} input[name=code]`, code);
		await page.fill(`${form} input[name=name]`, "Spring offer");
		await page.fill(`${form} input[name=value]`, "20");
		await page.selectOption(`${form} select[name=duration]`, "repeating");
		await page.fill(`${form} input[name=periods]`, "3");
		// Redeemable through the last day of next year (UTC).
		const lastDay = `${new Date().getUTCFullYear() + 1}-12-31`;
		await page.fill(`${form} input[name=redeem_by]`, lastDay);
		await page.click("button:has-text('Create coupon')");
		await page.waitForSelector(`tr:has-text('${code}')`);
		const { coupons } = await api("GET", "/coupons");
		const coupon = coupons.find((c) => c.code === code);
		assert.equal(coupon.percent_off, 20);
		assert.equal(coupon.duration_in_periods, 3);
		assert.equal(coupon.redeem_by, `${lastDay}T23:59:59.999Z`);
		assert.match(await page.locator("tr", { hasText: code }).textContent(), new RegExp(lastDay));
		assert.match(await page.locator("tr", { hasText: code }).textContent(), /20% off, for 3 periods/);
		assert.deepEqual(await seriousViolations(), []);
	});

	it("shows the negotiated price beside the list price and applies the coupon", {
		timeout: 60_000,
	}, async () => {
		await open(`#/subscriptions/${subscription.id}`);
		const row = page.locator("section", { hasText: "Prices" }).locator("tr", { hasText: "llm_calls" });
		const text = await row.textContent();
		assert.match(text, /0\.25 USD per unit/);
		assert.match(text, /0\.2 USD per unit/);
		await page.fill("form[aria-label='Apply a coupon'] input[name=code]", code);
		await page.click("button:has-text('Apply coupon')");
		await page.waitForSelector(`[data-discount] code:has-text('${code}')`);
		const fresh = await api("GET", `/subscriptions/${subscription.id}`);
		assert.equal(
			fresh.discount.coupon_id,
			(await api("GET", "/coupons")).coupons.find((c) => c.code === code).id,
		);
		assert.deepEqual(await seriousViolations(), []);
	});

	it("neither page scrolls sideways on a phone", { timeout: 60_000 }, async () => {
		await page.setViewportSize({ width: 390, height: 844 });
		for (const hash of ["#/coupons", `#/subscriptions/${subscription.id}`]) {
			await open(hash);
			await page.waitForLoadState("networkidle");
			const overflow = await page.evaluate(() =>
				Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
			);
			assert.equal(overflow, 0, `${hash} at 390 px scrolls sideways`);
			assert.deepEqual(await seriousViolations(), [], hash);
		}
		await page.setViewportSize({ width: 1440, height: 900 });
	});

	it("archives the coupon after a confirmation", { timeout: 60_000 }, async () => {
		await open("#/coupons");
		await page.locator("tr", { hasText: code }).locator("button:has-text('Archive')").click();
		await page.click("dialog.confirm button:has-text('Archive coupon')");
		await page.waitForSelector(`tr:has-text('${code}') .badge:has-text('archived')`);
		const { coupons } = await api("GET", "/coupons");
		assert.equal(coupons.find((c) => c.code === code).status, "archived");
	});
});
