// The console's money pages (invoices, payments, credits, coupons), in headless Chromium against `wrangler dev`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, saveScreenshot, signInToConsole, startBrowser } from "./harness.mjs";
import { seed } from "./seed.mjs";

const STEP_MS = 60_000;
const hardStop = setTimeout(() => {
	console.error("console money-page tests: over 6 minutes, giving up");
	process.exit(1);
}, 360_000);
hardStop.unref();

let worker;
let browser;
let page;
let api;
let data;
const period = new Date().toISOString().slice(0, 7);
const today = new Date().toISOString().slice(0, 10);

before(async () => {
	worker = await startWorker();
	api = apiClient(worker.base, worker.adminKey);
	data = await seed(api);
	// A manual cost record without a customer or plan: the margins' "unattributed" row by customer and product.
	await api("POST", "/costs", { agent_id: data.qualifier.id, cost_type: "hosting", amount: 3, period });
	// The seed's costs reach the P&L when the accumulators flush (seconds later): the margins step compares the
	// page with the API, so both must read the same, settled figures.
	let last = "";
	await until(
		"the P&L settles",
		async () => {
			const now = JSON.stringify(
				await api(
					"GET",
					`/reports/pnl?start_date=${period}-01&end_date=${today}&currency=USD&group_by=customer`,
				),
			);
			const settled = now === last;
			last = now;
			return settled;
		},
		30_000,
		2_000,
	);
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
			await browser
				?.screenshot(`FAILED-money-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 50)}`)
				.catch(() => {});
			throw error;
		}
	});
}

const numbers = (locator) =>
	locator.evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute("data-value"))));

async function until(what, check, timeoutMs = 20_000, everyMs = 500) {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (await check()) return;
		await new Promise((r) => setTimeout(r, everyMs));
	}
	throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

describe("the console's money pages", { timeout: 330_000 }, () => {
	step(
		"margins by agent, customer and product equal GET /v1/reports/pnl, with the monthly series",
		async () => {
			for (const group of ["agent", "customer", "product"]) {
				await open(`#/margins?group_by=${group}`);
				await page.waitForSelector(`[data-margins=${group}] .metric[data-field=margin]`);
				const start = await page.inputValue("input[name=start]");
				const end = await page.inputValue("input[name=end]");
				const report = await api(
					"GET",
					`/reports/pnl?start_date=${start}&end_date=${end}&currency=USD&group_by=${group}&interval=month`,
				);
				assert.equal(
					Number(await page.getAttribute(".metric[data-field=margin]", "data-value")),
					report.margin,
					group,
				);
				const byGroup = page.locator("section", { hasText: `By ${group}` });
				assert.deepEqual(
					await numbers(byGroup.locator("[data-kind=margin]")),
					report.breakdown.map((row) => row.margin),
					group,
				);
				const byMonth = page.locator("section", { hasText: "By month" });
				assert.deepEqual(
					await numbers(byMonth.locator("[data-kind=revenue]")),
					report.series.map((row) => row.revenue),
				);
				await byMonth.locator("canvas").waitFor();
				if (report.breakdown.some((row) => row.id === null)) {
					await byGroup.locator("[data-note=unattributed]").waitFor();
				}
			}
		},
	);

	step("the event explorer lists a subscription's events and tails new ones live", async () => {
		await open(`#/events?subscription_id=${data.acmeSub.id}`);
		await page.waitForSelector("[data-events] tbody tr");
		const listed = await api("GET", `/events?subscription_id=${data.acmeSub.id}&limit=50`);
		assert.equal(await page.locator("[data-events] tbody tr").count(), listed.events.length);
		assert.deepEqual(
			await page.locator("[data-events] code.event-id").allTextContents(),
			listed.events.map((e) => e.id),
		);
		await page.check("input[name=live_tail]");
		const sent = await api("POST", "/actions", {
			agent_key: "lead-qualifier-eu-1",
			action_type: "llm_call",
			metadata: { tokens: 77, marker: "live-tail" },
		});
		await page.waitForSelector(`[data-events] code.event-id:has-text('${sent.id}')`, { timeout: 20_000 });
		await page.uncheck("input[name=live_tail]");
	});

	step("a customer's credit: grant, balance equal to the API, void after a confirmation", async () => {
		await open(`#/customers/${data.acme.id}`);
		await page.fill("form[aria-label='Grant credit'] input[name=amount]", "25");
		await page.fill("form[aria-label='Grant credit'] input[name=description]", "Prepaid pilot");
		await page.click("button:has-text('Grant credit')");
		await page.waitForSelector("tr:has-text('Prepaid pilot')");
		const balance = await api("GET", `/accounts/${data.acme.id}/balance`);
		assert.equal(balance.available, 25);
		for (const field of ["available", "pending_usage", "projected"]) {
			assert.equal(
				Number(await page.getAttribute(`[data-balance] [data-field=${field}]`, "data-value")),
				balance[field],
				field,
			);
		}
		await page.locator("tr", { hasText: "Prepaid pilot" }).locator("button:has-text('Void')").click();
		await page.click("dialog.confirm button:has-text('Void grant')");
		await page.waitForSelector("tr:has-text('Prepaid pilot') .badge:has-text('void')");
	});

	step("alerts and budgets per subscription: add one, see it trigger, delete it", async () => {
		await open(`#/subscriptions/${data.acmeSub.id}`);
		await page.fill("form[aria-label='Add an alert'] input[name=name]", "LLM budget");
		await page.selectOption("form[aria-label='Add an alert'] select[name=metric]", "llm_calls");
		await page.fill("form[aria-label='Add an alert'] input[name=threshold]", "5");
		await page.check("form[aria-label='Add an alert'] input[name=block]");
		await page.click("button:has-text('Add alert')");
		const row = page.locator("tr", { hasText: "LLM budget" });
		await row.waitFor();
		await api("POST", "/actions", { agent_key: "lead-qualifier-eu-1", action_type: "llm_call" });
		await until("the alert triggers", async () => {
			await open(`#/subscriptions/${data.acmeSub.id}`);
			return (await row.locator(".badge:has-text('triggered')").count()) === 1;
		});
		await row.locator("button:has-text('Delete')").click();
		await page.click("dialog.confirm button:has-text('Delete alert')");
		await row.waitFor({ state: "detached" });
	});

	step("live margins of the open month equal the API; a margin alert is added and fires", async () => {
		await open("#/margins/live");
		await page.waitForSelector("[data-live-margins=model] .metric[data-field=margin_percent]");
		const report = await api("GET", `/reports/margins?billing_period=${period}&group_by=model`);
		assert.equal(report.status, "open");
		for (const field of ["revenue", "costs", "margin", "margin_percent"]) {
			assert.equal(
				Number(await page.getAttribute(`.metric[data-field=${field}]`, "data-value")),
				report[field],
			);
		}
		assert.equal(await page.locator("[data-live-margins] tbody tr").count(), report.breakdown.length);
		await page.selectOption("select[name=group_by]", "customer");
		await page.waitForSelector("[data-live-margins=customer] .metric[data-field=revenue]");

		await open(`#/subscriptions/${data.acmeSub.id}`);
		const form = "form[aria-label='Add an alert']";
		await page.fill(`${form} input[name=name]`, "Thin margin");
		await page.selectOption(`${form} select[name=type]`, "margin");
		assert.equal(await page.isVisible(`${form} input[name=block]`), false);
		await page.fill(`${form} input[name=threshold]`, "100");
		await page.click("button:has-text('Add alert')");
		const row = page.locator("tr", { hasText: "Thin margin" });
		await row.waitFor();
		assert.match(await row.textContent(), /margin/);
		const alerts = await api("GET", `/alerts?subscription_id=${data.acmeSub.id}`);
		assert.equal(alerts.alerts.find((alert) => alert.name === "Thin margin")?.type, "margin");
		await api("POST", "/actions", {
			agent_key: "lead-qualifier-eu-1",
			action_type: "llm_call",
			metadata: { cost: 0.01 },
		});
		await until("the margin alert triggers", async () => {
			await open(`#/subscriptions/${data.acmeSub.id}`);
			return (await row.locator(".badge:has-text('triggered')").count()) === 1;
		});
		await row.locator("button:has-text('Delete')").click();
		await page.click("dialog.confirm button:has-text('Delete alert')");
		await row.waitFor({ state: "detached" });
	});

	step("an invoice's PDF opens and downloads; its payment is listed", async () => {
		const { invoices } = await api("POST", "/invoices/generate", {
			billing_period: period,
			account_id: data.globex.id,
		});
		const invoice = invoices[0];
		await open(`#/invoices/${invoice.id}`);
		const [download] = await Promise.all([
			page.waitForEvent("download"),
			page.click("button:has-text('Download PDF')"),
		]);
		assert.equal(download.suggestedFilename(), `${invoice.number}.pdf`);
		const file = readFileSync(await download.path());
		assert.equal(file.subarray(0, 5).toString(), "%PDF-");
		const [tab] = await Promise.all([
			browser.context.waitForEvent("page"),
			page.click("button:has-text('Open PDF')"),
		]);
		assert.match(tab.url(), /^blob:/);
		await tab.close();

		await page.fill("input[name=reference]", "wire-money-pages");
		await page.click("button:has-text('Mark as paid')");
		await page.waitForSelector("section:has-text('Payments') td:has-text('wire-money-pages')");
		await open(`#/payments?invoice_id=${invoice.id}`);
		const listed = await api("GET", `/payments?invoice_id=${invoice.id}`);
		assert.equal(listed.payments.length, 1);
		await page.waitForSelector(`[data-payment=${listed.payments[0].id}]`);
	});

	step("unbilled usage is listed, and one click subscribes the instance and adopts it", async () => {
		await api("POST", `/agents/${data.support.id}/instances`, { key: "stray-bot-1" });
		await api("POST", "/actions/batch", {
			events: Array.from({ length: 3 }, () => ({ agent_key: "stray-bot-1", action_type: "tool_call" })),
		});
		// Listed once the instance's accumulator flushed to D1 (seconds).
		const count = page.locator("[data-unbilled-count='stray-bot-1:tool_call']");
		await until("the stray instance is listed", async () => {
			await open(`#/usage/unbilled?billing_period=${period}`);
			return (await count.count()) === 1;
		});
		assert.equal(await count.textContent(), "3");
		const form = page.locator("form[data-adopt='stray-bot-1']");
		await form.locator("select[name=account_id]").selectOption(data.globex.id);
		await form.locator("select[name=rate_plan_id]").selectOption(data.starter.id);
		await form.locator("button:has-text('Subscribe and adopt')").click();
		await form.locator("xpath=..").locator("p.ok a").waitFor();
		await browser.screenshot("money-unbilled-adopted");
		const subscription = (
			await api("GET", `/subscriptions?account_id=${data.globex.id}&limit=100`)
		).subscriptions.find((sub) => sub.agent_instance_ids.includes("stray-bot-1"));
		assert.ok(subscription, "the adopting subscription exists");
		await until("the adopted usage leaves the unbilled list", async () => {
			const after = await api("GET", `/usage/unbilled?billing_period=${period}`);
			return !after.usage.some((line) => line.agent_key === "stray-bot-1");
		});
		const usage = await api("GET", `/usage?subscription_id=${subscription.id}`);
		assert.deepEqual(
			usage.usage.filter((line) => line.type === "tool_call").map((line) => line.count),
			[3],
		);
	});

	step(
		"every new page at 390 × 844 and 1440 × 900: no sideways scrolling, axe finds nothing serious",
		async () => {
			const pages = [
				["margins", "#/margins"],
				["live-margins", "#/margins/live"],
				["events", `#/events?subscription_id=${data.acmeSub.id}`],
				["subscription", `#/subscriptions/${data.acmeSub.id}`],
				["customer-credit", `#/customers/${data.acme.id}`],
				["payments", "#/payments"],
				["unbilled", "#/usage/unbilled"],
			];
			// A stray instance left unbilled, so the unbilled page is checked (and pictured) with its adopt form.
			await api("POST", "/actions", { agent_key: "stray-bot-2", action_type: "tool_call" });
			await until("the second stray instance is listed", async () => {
				const listed = await api("GET", `/usage/unbilled?billing_period=${period}`);
				return listed.usage.some((line) => line.agent_key === "stray-bot-2");
			});
			const findings = [];
			for (const [width, height, label] of [
				[390, 844, "phone"],
				[1440, 900, "desktop"],
			]) {
				await page.setViewportSize({ width, height });
				for (const [name, hash] of pages) {
					await open(hash);
					await page.waitForLoadState("networkidle");
					const overflow = await page.evaluate(() =>
						Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
					);
					assert.equal(overflow, 0, `${name} at ${width} px scrolls sideways`);
					await saveScreenshot(page, `console-${name}-${label}`);
					if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
					const found = await page.evaluate(async () =>
						(
							await window.axe.run(document, {
								runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"] },
							})
						).violations
							.filter((v) => v.impact === "serious" || v.impact === "critical")
							.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
					);
					findings.push(...found.map((f) => `${name} at ${width} px: ${f}`));
				}
			}
			await page.setViewportSize({ width: 1440, height: 900 });
			assert.deepEqual(findings, []);
		},
	);

	it("logged no page errors and no CSP violations", () => {
		assert.deepEqual(browser.problems, []);
	});
});
