// The console in a real browser: headless Chromium against the Worker under `wrangler dev` (fresh state, loopback
// only), every step through the page as an operator would do it, every number checked against the public API.
// Run with `npm run test:console`; screenshots land in test/console/screenshots/.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, saveScreenshot as screenshotTo, startBrowser, startReceiver } from "./harness.mjs";
import { EXPECTED, seed } from "./seed.mjs";

const STEP_MS = 60_000;
// The whole run is bounded: a hung browser or Worker fails the run instead of holding CI.
const hardStop = setTimeout(() => {
	console.error("console tests: over 6 minutes, giving up");
	process.exit(1);
}, 360_000);
hardStop.unref();

let worker;
let receiver;
let browser;
let page;
/** The README's screenshots (docs/screenshots), kept in the repository, as the page is in the window. */
const saveScreenshot = (name, options) => screenshotTo(page, name, options);
let api;
let data;
const secrets = {};
const period = new Date().toISOString().slice(0, 7);

before(async () => {
	[worker, receiver] = await Promise.all([startWorker(), startReceiver()]);
	api = apiClient(worker.base, worker.adminKey);
	data = await seed(api);
	// A second endpoint whose receiver answers 500: its deliveries stay pending, for the retry step.
	data.failingHook = await api("POST", "/webhooks", {
		url: receiver.failingUrl,
		events: ["invoice.created", "invoice.paid"],
		description: "receiver down",
	});
	browser = await startBrowser();
	page = browser.page;
	await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: worker.base });
});

after(async () => {
	await browser?.stop();
	await receiver?.stop();
	await worker?.stop();
	clearTimeout(hardStop);
});

async function signIn(key) {
	await page.fill("input[name=key]", key);
	await page.click("button:has-text('Sign in')");
}

/** Goes to a console page and waits until it is drawn (or has shown why not). */
async function open(hash) {
	await page.goto(`${worker.base}/console${hash}`);
	const path = hash.slice(1).split("?")[0];
	await page.waitForSelector(`main#main[data-route="${path}"][data-state]`);
}

/** A step of the walk-through; when it fails, the page as it was is saved next to the screenshots. */
function step(name, fn) {
	it(name, { timeout: STEP_MS }, async () => {
		try {
			await fn();
		} catch (error) {
			const slug = name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
			await browser?.screenshot(`FAILED-${slug}`).catch(() => {});
			throw error;
		}
	});
}

const shownValue = async (selector) => Number(await page.getAttribute(selector, "data-value"));

/** How many pixels the page is wider than the window (0: no sideways scrolling). */
const pageOverflow = () =>
	page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));

/** Whether the element is shown and lies wholly inside the window's width. */
const inView = (selector) =>
	page.$eval(selector, (element) => {
		const box = element.getBoundingClientRect();
		return box.width > 0 && box.height > 0 && box.left >= 0 && box.right <= window.innerWidth + 0.5;
	});

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

/** axe-core's serious and critical violations on the page as shown (WCAG 2.x A and AA rules). */
async function axeFindings(where) {
	// Evaluated through the DevTools protocol, which the page's CSP does not govern: the page itself still runs
	// only its own script.
	if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
	const violations = await page.evaluate(async () => {
		const result = await window.axe.run(document, {
			runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
		});
		return result.violations
			.filter((v) => v.impact === "serious" || v.impact === "critical")
			.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
	});
	return violations.map((v) => `${where}: ${v}`);
}

describe("the console", { timeout: 300_000 }, () => {
	step("answers a bad key with the API's words and the request id, not a blank page", async () => {
		await page.goto(`${worker.base}/console`);
		await signIn(`sk_api_${"0".repeat(40)}`);
		const problem = page.locator(".sign-in-problem");
		await problem.waitFor();
		assert.match(await problem.locator("h2").textContent(), /did not accept this key/);
		assert.equal(
			await problem.locator(".error-message").textContent(),
			"This key is unknown or has been revoked.",
		);
		assert.match(await problem.locator(".request-id").textContent(), /\S{6,}/);
		assert.match(await problem.locator(".error-meta").textContent(), /HTTP 401 · unauthorized/);
		await browser.screenshot("01-sign-in-bad-key");
		await saveScreenshot("console-sign-in-bad-key");

		// An SDK key is refused before it is sent anywhere, with what to do instead.
		await signIn("sk_live_abcdefghijklmnopqrstuvwxyz");
		await page.waitForSelector(".sign-in-status .error-message:has-text('SDK key')");
		assert.equal(await page.evaluate(() => sessionStorage.length), 0);
	});

	step("signs in with the operator key and shows it is a live admin key", async () => {
		await signIn(worker.adminKey);
		await page.waitForSelector("header.top");
		assert.equal(await page.getAttribute(".env", "data-environment"), "live");
		assert.equal(await page.textContent(".who"), "admin key · operator key");
		assert.equal(await page.evaluate(() => sessionStorage.getItem("amb.console.key")), worker.adminKey);
		assert.match(page.url(), /#\/overview$/);
	});

	step("an unreachable API at load is an error with a retry, never a sign-out", async () => {
		await page.route("**/v1/**", (route) => route.abort("connectionrefused"));
		await page.reload();
		const problem = page.locator(".boot-problem");
		await problem.waitFor();
		assert.match(await problem.locator("h2").textContent(), /could not be reached/);
		assert.equal(await problem.locator(".error").getAttribute("data-error-code"), "network_error");
		// The key is still kept.
		assert.equal(await page.evaluate(() => sessionStorage.getItem("amb.console.key")), worker.adminKey);
		await browser.screenshot("01b-api-unreachable");
		await saveScreenshot("console-api-unreachable");
		await page.unroute("**/v1/**");
		// The refused requests were this step's doing, not the console's.
		const own = browser.problems.filter((p) => !/ERR_CONNECTION_REFUSED|ERR_FAILED/.test(p));
		browser.problems.splice(0, browser.problems.length, ...own);
		await problem.locator("button:has-text('Retry')").click();
		await page.waitForSelector("header.top .who:has-text('operator key')");
		// Only a 401 forgets the key: the API answering 401 at load sends the reader to the sign-in page.
		await page.route("**/v1/api-keys*", (route) =>
			route.fulfill({
				status: 401,
				contentType: "application/json",
				body: JSON.stringify({
					error: {
						code: "unauthorized",
						message: "This key is unknown or has been revoked.",
						request_id: "req_test",
					},
				}),
			}),
		);
		await page.reload();
		await page.waitForSelector(".sign-in-problem");
		assert.equal(await page.evaluate(() => sessionStorage.getItem("amb.console.key")), null);
		await page.unroute("**/v1/api-keys*");
		await signIn(worker.adminKey);
		await page.waitForSelector("header.top");
	});

	step(
		"creates API keys, shows each secret once with a copy button, and revokes after a confirmation",
		async () => {
			await open("#/settings/api-keys");
			const create = async (name, permission, environment) => {
				await page.selectOption("form[aria-label='Create a key'] select[name=type]", "api");
				await page.selectOption("select[name=permission]", permission);
				await page.selectOption("select[name=environment]", environment);
				await page.fill("input[name=name]", name);
				await page.click("button:has-text('Create key')");
				await page.waitForSelector(`.secret-once h3:has-text('key ${name}')`);
				const secret = (await page.locator(".secret-once .secret").textContent()).trim();
				assert.match(secret, /^sk_api_[A-Za-z0-9]{40}$/);
				if (environment === "live") await page.waitForSelector(`code:has-text('${secret.slice(0, 13)}…')`);
				// A key of the other environment is not in this environment's list, and the console says so.
				else await page.waitForSelector(".secret-once :text('not listed here')");
				return secret;
			};
			secrets.readOnly = await create("Reporting (read-only)", "read-only", "live");
			await page.click(".secret-once button.copy");
			await page.waitForSelector(".secret-once [role=status]:has-text('Copied.')");
			assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secrets.readOnly);
			await browser.screenshot("02-api-key-created");
			await saveScreenshot("console-api-key-created");
			await page.click("button:has-text('I have stored it')");
			assert.equal(await page.locator(".secret-once").count(), 0);

			secrets.testAdmin = await create("Staging admin", "admin", "test");
			const temporary = await create("Temporary", "read-write", "live");
			await page.click("button:has-text('I have stored it')");
			// The list never shows a secret again: reload and look for it.
			await open("#/settings/api-keys");
			await page.waitForSelector("td:has-text('Temporary')");
			assert.equal((await page.content()).includes(temporary), false);
			assert.equal((await page.content()).includes(secrets.readOnly), false);

			const row = page.locator("tr", { hasText: "Temporary" });
			await row.locator("button:has-text('Revoke')").click();
			await page.click("dialog.confirm button:has-text('Cancel')");
			assert.equal(await page.locator("tr", { hasText: "Temporary" }).count(), 1);
			await row.locator("button:has-text('Revoke')").click();
			await page.waitForSelector("dialog.confirm");
			await browser.screenshot("03-api-key-revoke-confirm");
			await page.click("dialog.confirm button:has-text('Revoke')");
			await page.locator("tr", { hasText: "Temporary" }).waitFor({ state: "detached" });
			const revoked = await fetch(`${worker.base}/v1/agents`, {
				headers: { Authorization: `Bearer ${temporary}` },
			});
			assert.equal(revoked.status, 401);
			await browser.screenshot("04-api-keys");
		},
	);

	step(
		"creates a webhook (secret shown once), sends a signed test event to a local receiver, disables and enables it",
		async () => {
			await open("#/settings/webhooks");
			await page.fill("input[name=url]", receiver.url);
			await page.check("input[value='invoice.created']");
			await page.check("input[value='invoice.paid']");
			await page.fill("input[name=description]", "ERP sync");
			await page.click("button:has-text('Add endpoint')");
			secrets.webhook = (await page.locator(".secret-once .secret").textContent()).trim();
			assert.match(secrets.webhook, /^whsec_[A-Za-z0-9+/]{43}=$/);
			await browser.screenshot("05-webhook-created");

			await page.click("a:has-text('Send it a test event')");
			await page.waitForSelector("h1:has-text('127.0.0.1')");
			await page.selectOption("select[name=event]", "invoice.created");
			await page.click("button:has-text('Send test')");
			const result = page.locator(".test-result p");
			await result.waitFor();
			assert.equal(await result.getAttribute("data-delivered"), "true");
			assert.match(await result.textContent(), /^Delivered — HTTP 200 in \d+ ms/);
			const hit = await receiver.waitFor((r) => r.body.test === true, "test event");
			assert.equal(hit.headers["x-webhook-event"], "invoice.created");
			// Signed with the secret the console showed once: hex HMAC-SHA256 of the raw body.
			const signature = createHmac("sha256", secrets.webhook).update(hit.raw).digest("hex");
			assert.equal(hit.headers["x-webhook-signature"], signature);
			await browser.screenshot("06-webhook-test-sent");

			await page.click("main button:has-text('Disable')");
			await page.waitForSelector("h1 .badge:has-text('disabled')");
			await page.click("main button:has-text('Enable')");
			await page.waitForSelector("h1 .badge:has-text('enabled')");
			data.webhookPath = new URL(page.url()).hash;
		},
	);

	step("generates this month's invoices and pays one", async () => {
		await open("#/invoices");
		await page.fill("form[aria-label='Generate invoices'] input[name=billing_period]", period);
		await page.click("button:has-text('Generate invoices')");
		await page.waitForSelector(".generate-result :text('Created 2 invoices')");
		await browser.screenshot("07-invoices-generated");

		const listed = await api("GET", `/invoices?billing_period=${period}`);
		assert.equal(listed.total, 2);
		const acmeInvoice = listed.invoices.find((i) => i.account_id === data.acme.id);
		data.acmeInvoice = acmeInvoice;
		data.globexInvoice = listed.invoices.find((i) => i.account_id === data.globex.id);
		assert.equal(acmeInvoice.amount, EXPECTED.acmeInvoice);

		await page.click(`a:has-text('${acmeInvoice.number}')`);
		await page.waitForSelector(`h1:has-text('${acmeInvoice.number}')`);
		assert.equal(await shownValue("main .total"), 61);
		assert.equal(await page.locator("main tbody tr").count(), acmeInvoice.line_items.length);
		await page.fill("input[name=reference]", "wire-2026-0042");
		await page.click("button:has-text('Mark as paid')");
		await page.waitForSelector("h1 .badge:has-text('paid')");
		assert.equal(await page.locator("button:has-text('Mark as paid')").count(), 0);
		assert.equal((await api("GET", `/invoices/${acmeInvoice.id}`)).status, "paid");
		await browser.screenshot("08-invoice-paid");

		// Paying it again is refused by the API; the console would show that message (checked through the API).
		await assert.rejects(api("POST", `/invoices/${acmeInvoice.id}/pay`, {}), /409/);
	});

	step(
		"lists the endpoint's deliveries, filters them, shows a payload, and retries only what did not succeed",
		async () => {
			const paid = await receiver.waitFor(
				(r) => r.body.event === "invoice.paid" && r.body.data.invoice_id === data.acmeInvoice.id,
				"invoice.paid",
			);
			await open(data.webhookPath);
			// The receiver answered; the log records it once the delivery's status is written.
			const row = page.locator("tr", { hasText: "invoice.paid" });
			for (let i = 0; i < 20 && (await row.locator(".badge:has-text('succeeded')").count()) === 0; i++) {
				await page.waitForTimeout(500);
				await page.click("button:has-text('Refresh')");
			}
			await row.locator(".badge:has-text('succeeded')").waitFor();
			assert.equal((await page.locator("tr", { hasText: "invoice.created" }).count()) >= 1, true);
			// A delivery that succeeded offers no retry.
			assert.equal(await row.locator("button:has-text('Retry now')").count(), 0);

			// Its payload is what the receiver got.
			await row.locator("details.payload summary").click();
			const shown = row.locator("details.payload pre.json");
			await shown.waitFor();
			assert.deepEqual(JSON.parse(await shown.textContent()), JSON.parse(paid.raw));
			await browser.screenshot("09-webhook-deliveries");
			await saveScreenshot("console-webhook-deliveries");

			// The status filter asks the API for one state only.
			await page.selectOption("select[name=delivery_status]", "failed");
			await page.waitForSelector("main p.empty:has-text('No failed deliveries.')");
			assert.match(page.url(), /status=failed/);
			await page.selectOption("select[name=delivery_status]", "succeeded");
			await page.waitForSelector("main tbody tr");
			const statuses = await page.locator("main tbody .badge").allTextContents();
			assert.ok(statuses.length >= 2 && statuses.every((s) => s === "succeeded"), statuses.join());

			// The endpoint whose receiver answers 500: its deliveries wait for their next attempt, and can be retried.
			await open(`#/settings/webhooks/${data.failingHook.id}?status=pending`);
			const failing = page.locator("tr", { hasText: "invoice.paid" });
			for (let i = 0; i < 20 && (await failing.locator("td:has-text('500')").count()) === 0; i++) {
				await page.waitForTimeout(500);
				await page.click("button:has-text('Refresh')");
			}
			await failing.locator("td:has-text('500')").first().waitFor();
			const firstTry = receiver.received.find(
				(r) => r.path === "/hooks/fail" && r.body.event === "invoice.paid",
			);
			const countBefore = receiver.received.length;
			await failing.locator("button:has-text('Retry now')").click();
			const again = await receiver.waitFor(
				(r, index) => index >= countBefore && r.headers["webhook-id"] === firstTry.headers["webhook-id"],
				"retried invoice.paid",
			);
			assert.equal(again.raw, firstTry.raw);
		},
	);

	step(
		"shows revenue, costs and margin equal to the PnL API, and revenue by customer, product and agent",
		async () => {
			await open("#/overview");
			await page.waitForSelector(".metric[data-field=margin_percent]");
			const start = await page.inputValue("input[name=start]");
			const end = await page.inputValue("input[name=end]");
			const pnl = await api("GET", `/reports/pnl?start_date=${start}&end_date=${end}&currency=USD`);
			for (const field of ["revenue", "costs", "margin", "margin_percent"]) {
				assert.equal(await shownValue(`.metric[data-field=${field}]`), pnl[field], field);
			}
			// 61.00 + 0.50 of revenue, 0.40 + 0.10 of costs: margin 61.00, 61 / 61.5 = 99.19 %.
			assert.deepEqual([pnl.revenue, pnl.costs, pnl.margin, pnl.margin_percent], [61.5, 0.5, 61, 99.19]);
			assert.equal(await page.textContent(".metric[data-field=revenue] dd"), "$61.50");
			assert.equal(await page.textContent(".metric[data-field=margin_percent] dd"), "99.19 %");

			for (const group of ["customer", "product", "agent"]) {
				const report = await api(
					"GET",
					`/reports/revenue?start_date=${start}&end_date=${end}&group_by=${group}`,
				);
				const slot = page.locator(`[data-group=${group}]`);
				await slot.locator("canvas").waitFor();
				const shown = await slot
					.locator("tbody tr")
					.evaluateAll((rows) =>
						rows.map((tr) => [
							tr.cells[0].textContent,
							Number(tr.cells[1].querySelector("[data-value]").dataset.value),
						]),
					);
				assert.deepEqual(
					shown,
					report.breakdown.map((row) => [row.name, row.revenue]),
					group,
				);
			}

			// The agent breakdown's "unattributed" row (the base fee) is explained beside it.
			const agentSlot = page.locator("[data-group=agent]");
			await agentSlot.locator("em[data-unattributed]:has-text('unattributed')").waitFor();
			assert.match(
				await agentSlot.locator("[data-note=unattributed]").textContent(),
				/base fees.*not assigned to an agent/,
			);

			await page.selectOption("select[name=sub]", data.acmeSub.id);
			await page.waitForSelector("[data-usage-count=llm_call]");
			assert.equal(await page.textContent("[data-usage-count=llm_call]"), "8");
			await page.locator("section:has-text('Usage per day') canvas").waitFor();
			await browser.screenshot("10-overview");
		},
	);

	step("a reversed date range is one error, and the currency is chosen from ISO codes", async () => {
		await open("#/overview?start=2026-11-20&end=2026-11-01");
		assert.equal(await page.locator("main .error").count(), 1);
		assert.match(await page.textContent("main .error"), /starts after it ends/);
		assert.equal(await page.locator("main .metric").count(), 0);
		await open("#/agents?start=2026-11-20&end=2026-11-01");
		assert.equal(await page.locator("main .error").count(), 1);

		await open("#/overview");
		await page.waitForSelector(".metric[data-field=revenue]");
		assert.equal(await page.locator("input[name=currency]").count(), 0);
		const codes = await page.locator("select[name=currency] option").allTextContents();
		for (const code of ["USD", "EUR", "GBP", "JPY"]) assert.ok(codes.includes(code), code);
		assert.ok(codes.every((code) => /^[A-Z]{3}$/.test(code)));
		assert.equal(await page.inputValue("select[name=currency]"), "USD");
		// Submitting a reversed range from the form is refused there, once, and the page does not change.
		const before = page.url();
		await page.fill("input[name=start]", "2026-12-31");
		await page.fill("input[name=end]", "2026-01-01");
		await page.click("form.range button:has-text('Show')");
		await page.waitForSelector("form.range .error");
		assert.equal(await page.locator("main .error").count(), 1);
		assert.equal(page.url(), before);
		await page.fill("input[name=start]", "2026-01-01");
		await page.fill("input[name=end]", "2026-12-31");
		await page.selectOption("select[name=currency]", "EUR");
		// The USD page stays drawn until the hash change renders the EUR one: mark it, and wait for another.
		await page.evaluate(() => document.querySelector("main#main")?.setAttribute("data-previous", ""));
		await page.click("form.range button:has-text('Show')");
		await page.waitForSelector("main[data-state]:not([data-previous]) .metric[data-field=revenue]");
		assert.match(page.url(), /currency=EUR/);
		assert.equal(await shownValue(".metric[data-field=revenue]"), 0);
	});

	step("a dialog belongs to its page: Back closes it and nothing is voided", async () => {
		await open("#/invoices");
		await open(`#/invoices/${data.globexInvoice.id}`);
		await page.click("button:has-text('Void invoice')");
		await page.waitForSelector("dialog.confirm[open]");
		await page.goBack();
		await page.waitForSelector('main#main[data-route="/invoices"][data-state]');
		assert.equal(await page.locator("dialog").count(), 0);
		assert.equal(await page.locator("button:has-text('Void it')").count(), 0);
		for (const invoice of [data.globexInvoice, data.acmeInvoice]) {
			assert.notEqual((await api("GET", `/invoices/${invoice.id}`)).status, "void");
		}
	});

	step("voids an invoice after a confirmation, and the overview follows the API", async () => {
		await open(`#/invoices/${data.globexInvoice.id}`);
		await page.click("button:has-text('Void invoice')");
		await page.click("dialog.confirm button:has-text('Void it')");
		await page.waitForSelector("h1 .badge:has-text('void')");
		assert.equal((await api("GET", `/invoices/${data.globexInvoice.id}`)).status, "void");
		await open("#/overview");
		await page.waitForSelector(".metric[data-field=revenue]");
		const start = await page.inputValue("input[name=start]");
		const end = await page.inputValue("input[name=end]");
		const pnl = await api("GET", `/reports/pnl?start_date=${start}&end_date=${end}`);
		assert.equal(pnl.revenue, EXPECTED.acmeInvoice);
		assert.equal(await shownValue(".metric[data-field=revenue]"), pnl.revenue);
		assert.equal(await shownValue(".metric[data-field=margin]"), pnl.margin);
	});

	step("lists customers with their subscriptions, and a customer's page", async () => {
		await open("#/customers");
		const acmeRow = page.locator("tr", { hasText: "Acme Corp" });
		await acmeRow.waitFor();
		assert.match(await acmeRow.textContent(), /active\s+Pro · lead-qualifier-eu-1/);
		assert.match(await page.locator("tr", { hasText: "Globex" }).textContent(), /Starter · support-bot-1/);
		await browser.screenshot("11-customers");
		await acmeRow.locator("a:has-text('Acme Corp')").click();
		await page.waitForSelector("h1:has-text('Acme Corp')");
		assert.match(await page.textContent("main"), new RegExp(data.acmeSub.id));
		assert.match(await page.textContent("main"), new RegExp(data.acmeInvoice.number));
		await browser.screenshot("12-customer");
	});

	step("lists agents with their instances and what each cost, equal to GET /v1/costs", async () => {
		await open("#/agents");
		const start = await page.inputValue("input[name=start]");
		const end = await page.inputValue("input[name=end]");
		for (const agent of [data.qualifier, data.support]) {
			const costs = await api("GET", `/costs?agent_id=${agent.id}&start_date=${start}&end_date=${end}`);
			assert.equal(await shownValue(`[data-agent-cost=${agent.id}]`), costs.total, agent.name);
		}
		assert.equal(await shownValue(`[data-agent-cost=${data.qualifier.id}]`), EXPECTED.acmeCosts);
		assert.match(
			await page.locator("tr", { hasText: "Lead qualifier" }).textContent(),
			/lead-qualifier-eu-1/,
		);
		await browser.screenshot("13-agents");
		await page.click("a:has-text('Lead qualifier')");
		await page.waitForSelector("h1:has-text('Lead qualifier')");
		assert.equal(await shownValue("main .total"), EXPECTED.acmeCosts);
		await browser.screenshot("14-agent");
	});

	step(
		"every page at 390 × 844 and 1440 × 900: no sideways scrolling, the key elements in view, axe finds nothing serious",
		async () => {
			const pages = [
				["overview", "#/overview", ".metric[data-field=revenue]"],
				["customers", "#/customers", "main table, main .table-wrap"],
				["customer", `#/customers/${data.acme.id}`, "main h1"],
				["invoices", "#/invoices", "main .num"],
				["invoice", `#/invoices/${data.acmeInvoice.id}`, "main .total"],
				["agents", "#/agents", "main .num"],
				["agent", `#/agents/${data.qualifier.id}`, "main .total"],
				["api-keys", "#/settings/api-keys", "main table"],
				["webhooks", "#/settings/webhooks", "main table"],
				["webhook", data.webhookPath, "main .badge"],
			];
			const findings = [];
			for (const [width, height, label] of [
				[390, 844, "phone"],
				[1440, 900, "desktop"],
			]) {
				await page.setViewportSize({ width, height });
				for (const [name, hash, key] of pages) {
					await open(hash);
					await page.locator(key).first().waitFor();
					const where = `${name} at ${width} px`;
					assert.equal(await pageOverflow(), 0, `${where}: the page scrolls sideways`);
					// Sign out is on screen; every amount shown is inside the screen's width.
					assert.ok(await inView("header .sign-out"), `${where}: Sign out is off screen`);
					const cut = await page.$$eval("main .num", (nums) =>
						nums
							.filter((n) => n.getClientRects().length > 0)
							.filter((n) => {
								const box = n.getBoundingClientRect();
								return box.left < 0 || box.right > window.innerWidth + 0.5;
							})
							.map((n) => n.textContent),
					);
					assert.deepEqual(cut, [], `${where}: amounts cut off`);
					if (label === "phone") {
						// The navigation is folded behind Menu, and opens.
						assert.equal(await page.isVisible("nav.side"), false, `${where}: navigation not folded`);
						await page.click("header button.menu");
						assert.ok(await inView("nav.side a:has-text('Invoices')"), `${where}: menu does not open`);
						assert.equal(await page.getAttribute("header button.menu", "aria-expanded"), "true");
						await page.click("header button.menu");
					} else {
						assert.equal(await page.isVisible("header button.menu"), false);
						assert.ok(await inView("nav.side a:has-text('Invoices')"));
					}
					await saveScreenshot(`console-${name}-${label}`);
					findings.push(...(await axeFindings(where)));
				}
			}
			await page.setViewportSize({ width: 1440, height: 900 });
			assert.deepEqual(findings, [], findings.join("\n"));
		},
	);

	step("switches to a read-only key: the reports work, settings answer in the API's words", async () => {
		await page.click("a:has-text('Switch key')");
		await page.waitForSelector("text=Paste another key to switch");
		await signIn(secrets.readOnly);
		await page.waitForSelector(".who:has-text('read-only key')");
		assert.equal(await page.getAttribute(".env", "data-environment"), "unknown");
		assert.match(await page.textContent(".who"), /Reporting|sk_api_/);
		await page.waitForSelector(".metric[data-field=revenue]");

		await open("#/settings/api-keys");
		const error = page.locator("main .error");
		await error.waitFor();
		assert.equal(
			await error.locator(".error-message").textContent(),
			"A read-only API key may not call GET /v1/api-keys.",
		);
		assert.match(await error.locator(".error-meta").textContent(), /HTTP 403 · forbidden · request id \S+/);
		await browser.screenshot("15-read-only-forbidden");
	});

	step("switches to a test-environment admin key, which sees none of live's data", async () => {
		await page.click("a:has-text('Switch key')");
		await signIn(secrets.testAdmin);
		await page.waitForSelector(".env[data-environment=test]");
		assert.equal(await page.textContent(".who"), "admin key · Staging admin");
		await page.waitForSelector(".metric[data-field=revenue]");
		assert.equal(await shownValue(".metric[data-field=revenue]"), 0);
		await browser.screenshot("16-test-environment");
	});

	step("signs out: the key leaves the tab", async () => {
		await page.click("button:has-text('Sign out')");
		await page.waitForSelector("input[name=key]");
		assert.equal(await page.evaluate(() => sessionStorage.getItem("amb.console.key")), null);
		await page.reload();
		await page.waitForSelector("input[name=key]");
		await browser.screenshot("17-signed-out");
		// The sign-in page at both widths, checked like the others.
		const findings = [];
		for (const [width, height, label] of [
			[390, 844, "phone"],
			[1440, 900, "desktop"],
		]) {
			await page.setViewportSize({ width, height });
			assert.equal(await pageOverflow(), 0, `sign-in at ${width} px scrolls sideways`);
			assert.ok(await inView("button:has-text('Sign in')"));
			await saveScreenshot(`console-sign-in-${label}`);
			findings.push(...(await axeFindings(`sign-in at ${width} px`)));
		}
		assert.deepEqual(findings, []);
	});

	step("/docs renders the API reference from this host alone, under a strict CSP", async () => {
		const requests = [];
		const record = (request) => requests.push(request.url());
		browser.context.on("request", record);
		try {
			const response = await page.goto(`${worker.base}/docs`);
			const csp = response.headers()["content-security-policy"];
			for (const rule of [
				"default-src 'none'",
				"script-src 'self'",
				"connect-src 'self'",
				"frame-ancestors 'none'",
			])
				assert.ok(csp.includes(rule), `${rule} in ${csp}`);
			assert.ok(!/unsafe-eval|https?:/.test(csp), csp);
			// The viewer draws the document: its title and the operations of a tag.
			await page
				.getByText("Agent Metering & Billing API", { exact: false })
				.first()
				.waitFor({ timeout: 30_000 });
			await page.getByText("Create an API or SDK key", { exact: false }).first().waitFor({ timeout: 30_000 });
			// As long as the waits above: on a slow machine the viewer's own loads can take more than the default 15 s.
			await page.waitForLoadState("networkidle", { timeout: 30_000 });
			await page.setViewportSize({ width: 390, height: 844 });
			await saveScreenshot("docs-phone", { fullPage: false });
			await page.setViewportSize({ width: 1440, height: 900 });
			await saveScreenshot("docs-desktop", { fullPage: false });
		} finally {
			browser.context.off("request", record);
		}
		const loopback = (url) =>
			/^(data|blob):/.test(url) || ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
		assert.ok(requests.length >= 3, requests.join("\n"));
		assert.ok(requests.some((url) => url.endsWith("/docs/scalar.js")));
		assert.ok(requests.some((url) => url.endsWith("/v1/openapi.json")));
		assert.deepEqual(
			requests.filter((url) => !loopback(url)),
			[],
		);
	});

	it("logged no page errors and no CSP violations", () => {
		assert.deepEqual(browser.problems, []);
	});
});
