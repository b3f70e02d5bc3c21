// A preview of the money pages before their endpoints exist on a branch: their answers are
// contract-shaped fixtures served by the browser (page.route), everything else is the real Worker under
// `wrangler dev`. It checks that each new page draws those shapes without sideways scrolling and without serious
// axe findings at both widths, and saves their screenshots. It proves the pages, not the endpoints: that is
// test/console/money-pages.mjs, against the real ones. Run with `npm run test:console:preview` (not in CI).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, saveScreenshot, startBrowser } from "./harness.mjs";
import { seed } from "./seed.mjs";

const hardStop = setTimeout(() => process.exit(1), 300_000);
hardStop.unref();

let worker;
let browser;
let page;
let data;
const now = new Date();
const period = now.toISOString().slice(0, 7);
const iso = (minutesAgo) => new Date(now.getTime() - minutesAgo * 60_000).toISOString();

function fixtures() {
	const acme = data.acme.id;
	const events = Array.from({ length: 8 }, (_, i) => ({
		id: `evt_preview${String(i).padStart(4, "0")}`,
		kind: i === 3 ? "outcome" : "action",
		agent_key: "lead-qualifier-eu-1",
		type: i === 3 ? "converted_lead" : "llm_call",
		value: i === 3 ? 100 : null,
		metadata: i === 3 ? {} : { model: i % 2 ? "gpt-4.1" : "claude-sonnet", tokens: 1200 + i * 37 },
		timestamp: iso(i * 7),
		received_at: iso(i * 7),
		subscription_id: data.acmeSub.id,
		billable: i !== 6,
	}));
	return {
		pnl: (group) => ({
			revenue: 1234.5,
			costs: 310.25,
			margin: 924.25,
			margin_percent: 74.87,
			currency: "USD",
			start_date: `${period}-01`,
			end_date: `${period}-28`,
			breakdown: {
				agent: [
					{
						id: data.qualifier.id,
						name: "Lead qualifier",
						revenue: 900,
						costs: 200.25,
						margin: 699.75,
						margin_percent: 77.75,
					},
					{
						id: data.support.id,
						name: "Support bot",
						revenue: 185.5,
						costs: 107,
						margin: 78.5,
						margin_percent: 42.32,
					},
					{ id: null, name: "unattributed", revenue: 149, costs: 3, margin: 146, margin_percent: 97.99 },
				],
				customer: [
					{
						id: acme,
						name: "Acme Corp",
						revenue: 1049,
						costs: 250.25,
						margin: 798.75,
						margin_percent: 76.14,
					},
					{
						id: data.globex.id,
						name: "Globex",
						revenue: 185.5,
						costs: 60,
						margin: 125.5,
						margin_percent: 67.65,
					},
				],
				product: [
					{
						id: data.pro.id,
						name: "Pro",
						revenue: 1049,
						costs: 250.25,
						margin: 798.75,
						margin_percent: 76.14,
					},
					{
						id: data.starter.id,
						name: "Starter",
						revenue: 185.5,
						costs: 60,
						margin: 125.5,
						margin_percent: 67.65,
					},
				],
			}[group],
			series: [
				{ period: "2026-09", revenue: 301, costs: 80, margin: 221, margin_percent: 73.42 },
				{ period: "2026-10", revenue: 420.25, costs: 120.1, margin: 300.15, margin_percent: 71.42 },
				{ period: "2026-11", revenue: 513.25, costs: 110.15, margin: 403.1, margin_percent: 78.54 },
			],
		}),
		events: { events, next_cursor: "cur_preview" },
		balance: { account_id: acme, currency: "USD", available: 175, pending_usage: 61, projected: 114 },
		grants: {
			credit_grants: [
				{
					id: "cgr_preview1",
					account_id: acme,
					amount: 200,
					remaining: 175,
					currency: "USD",
					expires_at: `${period}-28T23:59:59Z`,
					description: "Prepaid pilot",
					status: "active",
					created_at: iso(3000),
				},
				{
					id: "cgr_preview2",
					account_id: acme,
					amount: 50,
					remaining: 0,
					currency: "USD",
					expires_at: null,
					description: "Goodwill",
					status: "depleted",
					created_at: iso(9000),
				},
			],
			total: 2,
			limit: 100,
			offset: 0,
		},
		alerts: {
			alerts: [
				{
					id: "alr_preview1",
					subscription_id: data.acmeSub.id,
					account_id: acme,
					metric: "llm_calls",
					threshold: 5,
					name: "LLM budget",
					block: true,
					status: "triggered",
					triggered_at: iso(30),
					billing_period: period,
					created_at: iso(600),
				},
				{
					id: "alr_preview2",
					subscription_id: data.acmeSub.id,
					account_id: acme,
					metric: null,
					threshold: 500,
					name: "Monthly spend",
					block: false,
					status: "armed",
					triggered_at: null,
					billing_period: period,
					created_at: iso(600),
				},
			],
			total: 2,
			limit: 100,
			offset: 0,
		},
		payments: {
			payments: [
				{
					id: "pay_preview1",
					invoice_id: "inv_preview1",
					account_id: acme,
					amount: 61,
					currency: "USD",
					reference: "wire-2026-0042",
					paid_at: iso(100),
				},
				{
					id: "pay_preview2",
					invoice_id: "inv_preview2",
					account_id: data.globex.id,
					amount: 0.5,
					currency: "USD",
					reference: null,
					paid_at: iso(2000),
				},
			],
			total: 2,
			limit: 20,
			offset: 0,
		},
		unbilled: {
			billing_period: period,
			usage: [
				{ agent_key: "stray-bot-1", kind: "action", type: "tool_call", count: 3, value: null },
				{ agent_key: "stray-bot-1", kind: "outcome", type: "ticket_resolved", count: 1, value: 1 },
			],
		},
	};
}

const json = (route, body) =>
	route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(body) });

before(async () => {
	worker = await startWorker();
	const api = apiClient(worker.base, worker.adminKey);
	data = await seed(api);
	const { invoices } = await api("POST", "/invoices/generate", {
		billing_period: period,
		account_id: data.acme.id,
	});
	data.invoice = invoices[0];
	browser = await startBrowser();
	page = browser.page;
	const f = fixtures();
	await page.route(/\/v1\/reports\/pnl\?.*group_by=/, (route) =>
		json(route, f.pnl(new URL(route.request().url()).searchParams.get("group_by"))),
	);
	await page.route(/\/v1\/events\?/, (route) => json(route, f.events));
	await page.route(/\/v1\/accounts\/[^/]+\/balance/, (route) => json(route, f.balance));
	await page.route(/\/v1\/accounts\/[^/]+\/credit-grants/, (route) => json(route, f.grants));
	await page.route(/\/v1\/alerts\?/, (route) => json(route, f.alerts));
	await page.route(/\/v1\/payments\?/, (route) => json(route, f.payments));
	await page.route(/\/v1\/usage\/unbilled/, (route) => json(route, f.unbilled));
	await page.route(/\/v1\/invoices\/inv_[A-Za-z0-9]+$/, async (route) => {
		const invoice = await (await route.fetch()).json();
		json(route, {
			...invoice,
			due_at: iso(-30 * 24 * 60),
			bill_to: {
				name: "Acme Corp",
				email: "ap@acme.example",
				billing_address: { city: "Berlin", country: "DE" },
			},
			credits_applied: 25,
			amount_due: invoice.amount - 25,
			payments: [],
		});
	});
	await page.goto(`${worker.base}/console`);
	await page.fill("input[name=key]", worker.adminKey);
	await page.click("button:has-text('Sign in')");
	await page.waitForSelector("header.top");
});

after(async () => {
	await browser?.stop();
	await worker?.stop();
	clearTimeout(hardStop);
});

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

describe("the money pages, drawn from contract-shaped answers", { timeout: 280_000 }, () => {
	it("every new page at 390 × 844 and 1440 × 900", { timeout: 240_000 }, async () => {
		const pages = [
			["margins", "#/margins?group_by=agent", "[data-kind=margin]"],
			["margins-customer", "#/margins?group_by=customer", "[data-kind=margin]"],
			["events", `#/events?subscription_id=${data.acmeSub.id}`, "[data-events] tbody tr"],
			["subscription", `#/subscriptions/${data.acmeSub.id}`, "[data-alerts] tbody tr"],
			["customer-credit", `#/customers/${data.acme.id}`, "[data-balance] .metric"],
			["invoice-documents", `#/invoices/${data.invoice.id}`, ".amount-due"],
			["payments", "#/payments", "[data-payment]"],
			["unbilled", `#/usage/unbilled?billing_period=${period}`, "form[data-adopt]"],
		];
		const findings = [];
		for (const [width, height, label] of [
			[390, 844, "phone"],
			[1440, 900, "desktop"],
		]) {
			await page.setViewportSize({ width, height });
			for (const [name, hash, key] of pages) {
				await page.goto(`${worker.base}/console${hash}`);
				await page.waitForSelector("main#main[data-state]");
				await page.locator(key).first().waitFor();
				await page.waitForTimeout(200);
				const overflow = await page.evaluate(() =>
					Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
				);
				assert.equal(overflow, 0, `${name} at ${width} px scrolls sideways`);
				await saveScreenshot(page, `console-${name}-${label}`);
				if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
				const found = await page.evaluate(async () =>
					(
						await window.axe.run(document, {
							runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
						})
					).violations
						.filter((v) => v.impact === "serious" || v.impact === "critical")
						.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
				);
				findings.push(...found.map((x) => `${name} at ${width} px: ${x}`));
			}
		}
		await page.setViewportSize({ width: 1440, height: 900 });
		assert.deepEqual(findings, []);
		assert.deepEqual(browser.problems, []);
	});
});
