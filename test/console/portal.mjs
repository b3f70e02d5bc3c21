// The customer portal's page (/portal, docs/portal.md) in headless Chromium against `wrangler dev`: what the
// customer sees through a minted link, at 1280 and 390 px, with axe-core; expiry, revocation, an unreachable API;
// and the console's "Share portal link".
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, saveScreenshot, startBrowser } from "./harness.mjs";

const STEP_MS = 60_000;
const hardStop = setTimeout(() => {
	console.error("portal browser tests: over 5 minutes, giving up");
	process.exit(1);
}, 300_000);
hardStop.unref();

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
const period = new Date().toISOString().slice(0, 7);

let worker;
let browser;
let page;
let api;
let data;
/** Every address the page asked for: nothing may leave the Worker's origin. */
const requested = [];

async function sendActions(key, events) {
	const response = await fetch(`${worker.base}/v1/actions/batch`, {
		method: "POST",
		headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
		body: JSON.stringify({ events }),
	});
	assert.equal(response.status, 201, await response.text());
}

async function until(what, check, timeoutMs = 20_000, everyMs = 500) {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (await check()) return;
		await new Promise((r) => setTimeout(r, everyMs));
	}
	throw new Error(`${what}: not within ${timeoutMs} ms`);
}

before(async () => {
	worker = await startWorker();
	api = apiClient(worker.base, worker.adminKey);
	// A customer with an invoiced and paid plan, a metered plan with usage this period, a budget and a grant.
	const account = await api("POST", "/accounts", { name: "Portal Customer Ltd", email: "ap@portal.example" });
	const flat = await api("POST", "/pricing/rate-plans", { name: "Starter", base_fee: 49, charges: [] });
	await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: flat.id,
		agent_instance_ids: ["portal-flat-1"],
	});
	const generated = await api("POST", "/invoices/generate", {
		billing_period: period,
		account_id: account.id,
	});
	const invoice = generated.invoices[0];
	await api("POST", `/invoices/${invoice.id}/pay`, { reference: "wire-portal-1" });
	const metered = await api("POST", "/pricing/rate-plans", {
		name: "Usage",
		base_fee: 10,
		charges: [
			{
				metric: "llm_calls",
				description: "LLM calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.01,
			},
		],
	});
	const usage = await api("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: metered.id,
		agent_instance_ids: ["portal-bot-1"],
	});
	const sdk = await api("POST", "/api-keys", { type: "sdk" });
	await sendActions(
		sdk.key,
		Array.from({ length: 42 }, () => ({ agent_key: "portal-bot-1", action_type: "llm_call" })),
	);
	await api("POST", "/alerts", { subscription_id: usage.id, threshold: 100, name: "Monthly budget" });
	await api("POST", "/alerts", {
		subscription_id: usage.id,
		metric: "llm_calls",
		threshold: 5000,
		name: "Call cap",
		block: true,
	});
	await api("POST", `/accounts/${account.id}/credit-grants`, { amount: 20, description: "Welcome credit" });
	// Part of the paid invoice refunded by a credit note: a refund row under payments, and the note itself.
	const note = await api("POST", `/invoices/${invoice.id}/credit-notes`, {
		amount: 25.5,
		reason: "product_unsatisfactory",
		refund: true,
	});
	// A second customer without prepaid credit, whose usage this period is billed in full.
	const plain = await api("POST", "/accounts", { name: "No Credit Co", email: "ap@nocredit.example" });
	await api("POST", "/subscriptions", {
		account_id: plain.id,
		rate_plan_id: flat.id,
		agent_instance_ids: ["portal-flat-2"],
	});
	data = { account, invoice, usage, note, plain };

	browser = await startBrowser();
	page = browser.page;
	page.on("request", (request) => requested.push(request.url()));
});

after(async () => {
	await browser?.stop();
	await worker?.stop();
	clearTimeout(hardStop);
});

function step(name, fn) {
	it(name, { timeout: STEP_MS }, async () => {
		try {
			await fn();
		} catch (error) {
			await browser
				?.screenshot(`FAILED-portal-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 50)}`)
				.catch(() => {});
			throw error;
		}
	});
}

const mint = (body = {}) => api("POST", `/accounts/${data.account.id}/portal-sessions`, body);

/** Opens a link as a new visit: from /portal, a link differing only in its fragment would not reload the page. */
async function openLink(url) {
	await page.goto("about:blank");
	await page.goto(url);
	await page.waitForSelector("main#main h1");
}

async function axeFindings(where) {
	// Evaluated through the DevTools protocol, which the page's CSP does not govern.
	if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
	const violations = await page.evaluate(async () =>
		(await window.axe.run(document)).violations
			.filter((v) => v.impact === "serious" || v.impact === "critical")
			.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
	);
	return violations.map((v) => `${where}: ${v}`);
}

describe("the customer portal's page", { timeout: 280_000 }, () => {
	step("shows the account through a minted link, and drops the token from the address bar", async () => {
		const session = await mint();
		assert.equal(session.url, `${worker.base}/portal#token=${session.token}`);
		await openLink(session.url);
		await page.waitForSelector("h1.account-name");
		assert.equal(await page.textContent("h1.account-name"), "Portal Customer Ltd");
		assert.equal(await page.textContent(".portal-top .seller"), "Agent Metering & Billing");
		assert.equal(new URL(page.url()).hash, "");
		assert.ok(!page.url().includes(session.token));
		assert.equal(await page.evaluate(() => location.href.includes("token=")), false);

		// The period so far, as GET /v1/usage rates it (the events reach the accumulator at once).
		await until("the usage is counted", async () => {
			const report = await api("GET", `/usage?subscription_id=${data.usage.id}`);
			return report.total === 10.42;
		});
		await page.reload();
		await page.waitForSelector(`[data-subscription="${data.usage.id}"] .amount-so-far`);
		assert.equal(
			Number(await page.getAttribute(`[data-subscription="${data.usage.id}"] .amount-so-far`, "data-value")),
			10.42,
		);
		const invoices = page.locator("section", { hasText: "Invoices" });
		assert.equal(await invoices.locator(".invoice-number").first().textContent(), data.invoice.number);
		await page.waitForSelector("section:has-text('Budgets and alerts') td:has-text('Monthly budget')");
		await page.waitForSelector("section:has-text('Credit') td:has-text('Welcome credit')");
		assert.equal(Number(await page.getAttribute(".metric[data-field=available]", "data-value")), 20);
		await page.waitForSelector("section:has-text('Payments') td:has-text('wire-portal-1')");
	});

	step(
		"names charges as the invoice does, the period's amount once, and what a blocking budget does",
		async () => {
			const card = page.locator(`[data-subscription="${data.usage.id}"]`);
			assert.deepEqual(await card.locator("td[data-label=charge]").allTextContents(), [
				"Base fee",
				"LLM calls",
			]);
			const text = await page.textContent("main");
			assert.ok(!text.includes("llm_calls"), "a metric id is shown");
			assert.ok(!/accrued/i.test(text), "a second figure for the period is shown");
			assert.equal(await page.locator(".metric[data-field=pending_usage]").count(), 0);
			// This account has prepaid credit: what is left of it once the period is invoiced is shown.
			assert.equal(await page.locator(".metric[data-field=projected]").count(), 1);
			const cap = page.locator("tr", { hasText: "Call cap" });
			assert.equal(await cap.locator("td[data-label=on]").textContent(), "LLM calls");
			assert.match(await cap.textContent(), /once reached, further usage is refused until the next period/);
			assert.ok(!/·\s*stops usage/.test(text));
		},
	);

	step(
		"lists credit notes beside the invoices, and a refund as a refund naming its credit note",
		async () => {
			const notes = page.locator("section", { has: page.locator("h2", { hasText: "Credit notes" }) });
			const row = notes.locator("tbody tr").first();
			assert.equal(await row.locator(".credit-note-number").textContent(), data.note.number);
			assert.equal(await row.locator("td[data-label=invoice]").textContent(), data.invoice.number);
			assert.match(await row.locator("td[data-label=amount]").textContent(), /^\$25\.50/);
			assert.equal(await row.locator("td[data-label=reason]").textContent(), "Product unsatisfactory");
			const refund = page.locator("section:has-text('Payments') tr", { hasText: "Refund" });
			assert.match(await refund.textContent(), new RegExp(`credit note ${data.note.number}`));
			assert.equal(await refund.locator("td[data-label=amount]").textContent(), "$25.50");
			const download = page.waitForEvent("download");
			await page.click(`button[aria-label="Open the PDF of credit note ${data.note.number}"]`);
			assert.equal((await download).suggestedFilename(), `${data.note.number}.pdf`);
		},
	);

	step("shows no projected balance to an account without prepaid credit", async () => {
		const other = await api("POST", `/accounts/${data.plain.id}/portal-sessions`, {});
		await openLink(other.url);
		await page.waitForSelector("section:has-text('Credit') p.empty");
		assert.equal(await page.locator(".metric[data-field=projected]").count(), 0);
		assert.equal(await page.locator(".metric.negative").count(), 0);
		const session = await mint();
		await openLink(session.url);
	});

	step("downloads an invoice's PDF with the token", async () => {
		const download = page.waitForEvent("download");
		await page.click(`button[aria-label="Open the PDF of invoice ${data.invoice.number}"]`);
		const file = await download;
		assert.equal(file.suggestedFilename(), `${data.invoice.number}.pdf`);
		const bytes = readFileSync(await file.path());
		assert.equal(bytes.subarray(0, 5).toString("latin1"), "%PDF-");
		// The invoice's document names its credit note and the refund, each on its own line.
		const text = execFileSync("pdftotext", ["-layout", await file.path(), "-"], { encoding: "utf8" });
		assert.match(text, new RegExp(`Refunded, credit note ${data.note.number}\\s+USD 25\\.50`));
		assert.match(text, new RegExp(`Credit note ${data.note.number} of USD 25\\.50`));
		assert.match(text, /Amount paid, net of refunds\s+USD 23\.50/);
		await page.waitForSelector(`p.ok:has-text('${data.invoice.number}.pdf')`);
	});

	step("at 1280 and 390 px: no sideways scrolling, axe finds nothing serious or critical", async () => {
		const findings = [];
		for (const [width, height, label] of [
			[1280, 800, "desktop"],
			[390, 844, "phone"],
		]) {
			await page.setViewportSize({ width, height });
			await page.reload();
			await page.waitForSelector("h1.account-name");
			await page.waitForLoadState("networkidle");
			const overflow = await page.evaluate(() =>
				Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
			);
			assert.equal(overflow, 0, `the portal at ${width} px scrolls sideways`);
			await saveScreenshot(page, `portal-${label}`);
			findings.push(...(await axeFindings(`portal at ${width} px`)));
		}
		await page.setViewportSize({ width: 1280, height: 800 });
		assert.deepEqual(findings, []);
	});

	step("says so when the link is revoked or expired, or has no token", async () => {
		const session = await mint();
		await openLink(session.url);
		await page.waitForSelector("h1.account-name");
		await api("DELETE", `/portal-sessions/${session.id}`);
		await page.reload();
		await page.waitForSelector("h1:has-text('This link has expired')");
		assert.deepEqual(await axeFindings("expired link"), []);
		// The bad token is forgotten: a reload shows the page's own "open your link".
		await page.goto(`${worker.base}/portal`);
		await page.waitForSelector("h1:has-text('Open your billing link')");
		assert.deepEqual(await axeFindings("no link"), []);
	});

	step("says so when the API cannot be reached, and recovers on retry", async () => {
		const session = await mint();
		await page.route("**/portal/api/**", (route) => route.abort("internetdisconnected"));
		await openLink(session.url);
		await page.waitForSelector("h1:has-text('cannot be reached')");
		assert.deepEqual(await axeFindings("unreachable"), []);
		await page.unroute("**/portal/api/**");
		await page.click("button:has-text('Try again')");
		await page.waitForSelector("h1.account-name");
	});

	step("the console's customer page shares a portal link", async () => {
		await page.goto(`${worker.base}/console`);
		await page.fill("input[name=key]", worker.adminKey);
		await page.click("button:has-text('Sign in')");
		await page.waitForSelector("header.top");
		await page.goto(`${worker.base}/console#/customers/${data.account.id}`);
		await page.click("button:has-text('Share portal link')");
		const url = (await page.textContent(".secret-once .secret")) ?? "";
		assert.match(url, new RegExp(`^${worker.base}/portal#token=pst_[A-Za-z0-9_-]{43}$`));
		await page.locator("section:has-text('Customer portal')").scrollIntoViewIfNeeded();
		await saveScreenshot(page, "console-share-portal-link", { fullPage: false });
		await page.click("button:has-text('Revoke this link now')");
		await page.waitForSelector("p.ok:has-text('Revoked')");
		await page.goto(url);
		await page.waitForSelector("h1:has-text('This link has expired')");
	});

	it("asked nothing of any other origin, and logged no page errors or CSP violations", () => {
		const elsewhere = requested.filter(
			(url) => !url.startsWith(worker.base) && !url.startsWith("blob:") && !url.startsWith("data:"),
		);
		assert.deepEqual(elsewhere, []);
		// The unreachable step's own aborted requests are logged as failed loads; nothing else may be.
		assert.deepEqual(
			browser.problems.filter((problem) => !/ERR_INTERNET_DISCONNECTED/.test(problem)),
			[],
		);
	});
});
