// Credit notes and draft invoices in the console (docs/credit-notes.md), in headless Chromium against `wrangler
// dev`: issue a refunding credit note on a paid invoice's page, then add a one-off line to a draft and finalize it,
// every figure checked against the API. Run with `node test/console/credit-notes.mjs` (after `npm run build:console`).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, saveScreenshot, signInToConsole, startBrowser } from "./harness.mjs";

const STEP_MS = 60_000;
const hardStop = setTimeout(() => {
	console.error("credit note browser tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

const period = new Date().toISOString().slice(0, 7);
let worker;
let browser;
let page;
let api;
const data = {};

async function invoiceFor(name, baseFee, accountFields = {}) {
	const account = await api("POST", "/accounts", { name, email: "ap@example.test", ...accountFields });
	const plan = await api("POST", "/pricing/rate-plans", {
		name: `${name} plan`,
		base_fee: baseFee,
		charges: [],
	});
	const subscription = await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [`${name.toLowerCase().replaceAll(" ", "-")}-1`],
	});
	const generated = await api("POST", "/invoices/generate", {
		billing_period: period,
		account_id: account.id,
	});
	return { ...generated.invoices[0], subscription };
}

before(async () => {
	worker = await startWorker();
	api = apiClient(worker.base, worker.adminKey);
	data.paid = await invoiceFor("Refund Co", 100);
	await api("POST", `/invoices/${data.paid.id}/pay`, {});
	data.draft = await invoiceFor("Draft Co", 20, { invoice_grace_days: 3 });
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

function step(name, fn) {
	it(name, { timeout: STEP_MS }, async () => {
		try {
			await fn();
		} catch (error) {
			await browser?.screenshot(`FAILED-credit-notes-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 50)}`);
			throw error;
		}
	});
}

/**
 * Identifiers and periods ("CN-000001", "INV-000001", "2026-11") that the page shows split over two lines: a range
 * over the text that has more than one line box.
 */
function splitTokens() {
	return page.evaluate(() => {
		const split = [];
		const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
		for (let node = walker.nextNode(); node; node = walker.nextNode()) {
			for (const match of node.data.matchAll(/(?:CN|INV)-\d{6}|\b\d{4}-\d{2}\b/g)) {
				const range = document.createRange();
				range.setStart(node, match.index);
				range.setEnd(node, match.index + match[0].length);
				const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
				if (lines.size > 1) split.push(match[0]);
			}
		}
		return split;
	});
}

describe("credit notes and drafts in the console", { timeout: 230_000 }, () => {
	step("issues a refunding credit note on a paid invoice and lists it with its PDF", async () => {
		await open(`#/invoices/${data.paid.id}`);
		const form = page.locator("form[aria-label='Issue a credit note']");
		await form.locator("input[name=amount]").fill("30");
		await form.locator("select[name=reason]").selectOption("duplicate");
		await form.locator("input[name=refund]").check();
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("main#main[data-state=ready] >> text=CN-000001 PDF");
		const invoice = await api("GET", `/invoices/${data.paid.id}`);
		assert.equal(invoice.amount_credited, 30);
		assert.equal(invoice.amount_paid, 70);
		const credited = await page.locator("p.credited").getAttribute("data-value");
		assert.equal(Number(credited), 30);
		const row = page.locator("tr", { hasText: "CN-000001 PDF" });
		assert.match(await row.textContent(), /duplicate/);
		assert.match(await row.textContent(), /30\.00/);
		await browser.screenshot("credit-notes-invoice");
		// Too much is refused in the API's words, and nothing is stored.
		await form.locator("input[name=amount]").fill("80");
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("text=at most 70");
		assert.equal((await api("GET", `/credit-notes?invoice_id=${data.paid.id}`)).total, 1);
	});

	step("shows what was paid, refunded and remains, and never breaks a number or a period", async () => {
		await open(`#/invoices/${data.paid.id}`);
		const value = async (selector) => Number(await page.getAttribute(selector, "data-value"));
		assert.equal(await value("p.amount-due"), 100);
		assert.equal(await value("p.amount-paid"), 70);
		assert.equal(await value("p.amount-refunded"), 30);
		assert.equal(await value("p.amount-remaining"), 0);
		assert.match(await page.textContent("p.amount-paid"), /^Paid, net of refunds \$70\.00$/);
		const refund = page.locator("section:has-text('Payments and refunds') tr", { hasText: "refund" });
		assert.match(await refund.textContent(), /CN-000001/);
		const pages = [
			`#/invoices/${data.paid.id}`,
			"#/invoices",
			"#/payments",
			`#/customers/${data.paid.account_id}`,
		];
		for (const [width, hash] of [1280, 1024, 900, 780, 390].flatMap((w) => pages.map((p) => [w, p]))) {
			await page.setViewportSize({ width, height: 844 });
			await open(hash);
			assert.deepEqual(await splitTokens(), [], `${hash} at ${width} px`);
			if (width === 390 && hash.startsWith("#/invoices/"))
				await saveScreenshot(page, "console-invoice-refunded-phone");
		}
		await page.setViewportSize({ width: 1440, height: 900 });
	});

	step("formats budgets and margin minimums as money, and the margins chart has a legend", async () => {
		const sub = data.paid.subscription;
		await api("POST", "/alerts", { subscription_id: sub.id, threshold: 1250, name: "Spend cap" });
		await api("POST", "/alerts", {
			subscription_id: sub.id,
			type: "margin",
			threshold: 20,
			min_costs: 5,
			name: "Thin margin",
		});
		await open(`#/subscriptions/${sub.id}`);
		await page.waitForSelector("[data-alerts] tr:has-text('Thin margin')");
		const cap = page.locator("[data-alerts] tr", { hasText: "Spend cap" });
		assert.equal(await cap.locator("td[data-label=threshold]").textContent(), "$1,250.00");
		const margin = page.locator("[data-alerts] tr", { hasText: "Thin margin" });
		assert.match(await margin.textContent(), /once costs pass \$5\.00/);
		await open("#/margins");
		await page.waitForSelector("ul.legend li");
		const legends = await page.locator("ul.legend").first().locator("li").allTextContents();
		assert.deepEqual(legends, ["Revenue (USD)", "Costs (USD)", "Margin (USD)"]);
		assert.ok(!/-\$0\.00/.test(await page.textContent("main")), "a negative zero is shown");
	});

	step("lists drafts, adds a one-off line and finalizes", async () => {
		await open("#/invoices?status=draft");
		await page.locator(`a[href='#/invoices/${data.draft.id}']`).click();
		await page.waitForSelector(`main#main[data-state=ready] form[aria-label='Add a one-off line']`);
		const form = page.locator("form[aria-label='Add a one-off line']");
		await form.locator("input[name=description]").fill("Onboarding workshop");
		await form.locator("input[name=amount]").fill("15");
		await form.locator("button[type=submit]").click();
		await page.waitForSelector("main#main[data-state=ready] >> text=Onboarding workshop");
		assert.equal((await api("GET", `/invoices/${data.draft.id}`)).amount, 35);
		await page.locator("button:has-text('Finalize now')").click();
		await page.waitForSelector("main#main[data-state=ready] h1:has-text('INV-')");
		const issued = await api("GET", `/invoices/${data.draft.id}`);
		assert.equal(issued.status, "open");
		assert.match(issued.number, /^INV-\d{6}$/);
		assert.deepEqual(browser.problems, []);
	});
});
