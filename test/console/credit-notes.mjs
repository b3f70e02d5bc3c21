// Credit notes and draft invoices in the console (docs/credit-notes.md), in headless Chromium against `wrangler
// dev`: issue a refunding credit note on a paid invoice's page, then add a one-off line to a draft and finalize it,
// every figure checked against the API. Run with `node test/console/credit-notes.mjs` (after `npm run build:console`).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, signInToConsole, startBrowser } from "./harness.mjs";

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
	await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [`${name.toLowerCase().replaceAll(" ", "-")}-1`],
	});
	const generated = await api("POST", "/invoices/generate", {
		billing_period: period,
		account_id: account.id,
	});
	return generated.invoices[0];
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
