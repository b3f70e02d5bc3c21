// The console's audit log page (docs/audit-log.md) in headless Chromium against `wrangler dev`: the records an
// operator's changes left, newest first with each field's before → after; the filters; older pages; a read-write
// key's refusal; 390 px wide; and axe-core. Run with `node test/console/audit-log.mjs`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, redrawnBy, saveScreenshot, startBrowser } from "./harness.mjs";

const STEP_MS = 60_000;
const hardStop = setTimeout(() => {
	console.error("audit log browser tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

let worker;
let browser;
let page;
let api;
let data;

before(async () => {
	worker = await startWorker();
	api = apiClient(worker.base, worker.adminKey);
	const account = await api("POST", "/accounts", { name: "Audit Customer Ltd", email: "ap@audit.example" });
	await api("PATCH", `/accounts/${account.id}`, { email: "finance@audit.example", net_terms_days: 14 });
	const writer = await api("POST", "/api-keys", { type: "api", permission: "read-write", name: "writer" });
	for (let i = 0; i < 55; i++) {
		const response = await fetch(`${worker.base}/v1/agents`, {
			method: "POST",
			headers: { Authorization: `Bearer ${writer.key}`, "Content-Type": "application/json" },
			body: JSON.stringify({ name: `Agent ${i}`, type: "custom" }),
		});
		assert.equal(response.status, 201);
	}
	data = { account, writer };
	browser = await startBrowser();
	page = browser.page;
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
				?.screenshot(`FAILED-audit-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 50)}`)
				.catch(() => {});
			throw error;
		}
	});
}

async function signIn(key) {
	await page.goto(`${worker.base}/console#/sign-in`);
	await page.fill("input[name=key]", key);
	await page.click("button:has-text('Sign in')");
	await page.waitForSelector("main#main[data-state]");
}

const open = (hash) => openConsoleRoute(page, worker.base, hash);

const rows = () => page.locator("[data-audit-log] tbody tr");

describe("the audit log page", { timeout: 200_000 }, () => {
	step("lists the newest changes first, with the actor, and pages on to older ones", async () => {
		await signIn(worker.adminKey);
		await open("#/settings/audit-log");
		assert.equal(await page.locator("nav a[aria-current=page]").textContent(), "Settings → Audit log");
		assert.equal(await rows().count(), 50);
		const first = await rows().first().textContent();
		assert.match(first, /agent\.created/);
		assert.match(first, /api_key/);
		assert.match(first, new RegExp(data.writer.prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
		await page.click("button:has-text('Older records')");
		await page.waitForFunction(() => document.querySelectorAll("[data-audit-log] tbody tr").length > 50);
		// 55 agents, the key, and the account's create and update.
		assert.equal(await rows().count(), 58);
		assert.equal(await page.locator("button:has-text('Older records')").isDisabled(), true);
	});

	step("filters by resource and shows each field's value before and after", async () => {
		await page.fill("input[name=resource_id]", data.account.id);
		await redrawnBy(page, () => page.click("button:has-text('Show records')"));
		assert.match(page.url(), /resource_id=/);
		assert.equal(await page.getAttribute("main#main", "data-state"), "ready");
		assert.equal(await rows().count(), 2);
		const update = await rows().first().textContent();
		assert.match(update, /account\.updated/);
		assert.match(update, /"ap@audit\.example" → "finance@audit\.example"/);
		assert.match(update, /net_terms_days: 30 → 14/);
		assert.match(await rows().nth(1).textContent(), /operator.*account\.created/s);
		await open(`#/settings/audit-log?action=api_key.created`);
		assert.equal(await rows().count(), 1);
	});

	step("keeps every id, action and time whole at 1280 px, and shows changes on demand", async () => {
		await page.setViewportSize({ width: 1280, height: 800 });
		await open("#/settings/audit-log");
		// An inline element split over lines has one client rectangle per line.
		const split = await page.evaluate(() =>
			[
				...document.querySelectorAll(
					"[data-audit-log] tbody td > code, [data-audit-log] .when, [data-audit-log] td > span > code",
				),
			]
				.filter((element) => element.getClientRects().length > 1)
				.map((element) => element.textContent),
		);
		assert.deepEqual(split, []);
		await open(`#/settings/audit-log?resource_id=${data.account.id}`);
		const changes = rows().first().locator("details");
		assert.equal(await changes.getAttribute("open"), null);
		assert.match(await changes.locator("summary").textContent(), /email.*net_terms_days/);
		assert.equal(await changes.locator("ul.changes").isVisible(), false);
		await changes.locator("summary").click();
		assert.equal(await changes.locator("ul.changes").isVisible(), true);
		await saveScreenshot(page, "console-audit-log-desktop", { fullPage: false });
	});

	step("is compact on a phone: 20 records take under 2,600 px", async () => {
		await page.setViewportSize({ width: 390, height: 844 });
		await open("#/settings/audit-log?action=agent.created");
		const heights = await page.evaluate(() =>
			[...document.querySelectorAll("[data-audit-log] tbody tr")]
				.slice(0, 20)
				.map((row) => row.getBoundingClientRect().height),
		);
		assert.equal(heights.length, 20);
		const total = heights.reduce((a, b) => a + b, 0);
		assert.ok(total < 2600, `20 records are ${Math.round(total)} px tall at 390 px`);
		await saveScreenshot(page, "console-audit-log-phone", { fullPage: false });
		await page.setViewportSize({ width: 1440, height: 900 });
	});

	step("fits 390 px and has no serious or critical axe-core violation", async () => {
		await open("#/settings/audit-log");
		await page.setViewportSize({ width: 390, height: 844 });
		await page.waitForTimeout(200);
		const overflow = await page.evaluate(() =>
			Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
		);
		await page.setViewportSize({ width: 1440, height: 900 });
		assert.equal(overflow, 0, "the page scrolls sideways at 390 px");
		await page.evaluate(AXE);
		const violations = await page.evaluate(async () => {
			const result = await window.axe.run(document, {
				runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
			});
			return result.violations
				.filter((v) => v.impact === "serious" || v.impact === "critical")
				.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
		});
		assert.deepEqual(violations, []);
		assert.deepEqual(browser.problems, []);
	});

	step("tells a read-write key the log is for admin keys", async () => {
		await signIn(data.writer.key);
		await open("#/settings/audit-log");
		assert.match(await page.locator("nav a[href='#/settings/audit-log']").textContent(), /admin keys/);
		assert.match(await page.locator("[data-audit-log]").textContent(), /may not call GET \/v1\/audit-log/);
	});
});
