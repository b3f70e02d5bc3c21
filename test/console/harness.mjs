// What the console's browser tests run against: the Worker under `wrangler dev` with fresh state (shared with the
// bench), a webhook receiver on loopback, and headless Chromium driven by playwright-core.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const SCREENSHOTS = new URL("./screenshots/", import.meta.url).pathname;
/** The screenshots the README shows, committed. */
export const DOC_SCREENSHOTS = new URL("../../docs/screenshots/", import.meta.url).pathname;

/** Saves the whole page into docs/screenshots/<name>.png. */
export async function saveScreenshot(page, name, { fullPage = true } = {}) {
	mkdirSync(DOC_SCREENSHOTS, { recursive: true });
	await page.screenshot({ path: join(DOC_SCREENSHOTS, `${name}.png`), fullPage });
}
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps every request it got. */
export async function startReceiver() {
	const received = [];
	const server = createServer((request, response) => {
		const chunks = [];
		request.on("data", (chunk) => chunks.push(chunk));
		request.on("end", () => {
			const raw = Buffer.concat(chunks).toString("utf8");
			received.push({
				method: request.method,
				path: request.url,
				headers: request.headers,
				raw,
				body: JSON.parse(raw),
			});
			// An endpoint whose path ends in /fail stands for a receiver that is down: 500, so the delivery retries.
			if (request.url.endsWith("/fail"))
				response.writeHead(500, { "Content-Type": "text/plain" }).end("down");
			else response.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
		});
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}/hooks/billing`,
		failingUrl: `http://127.0.0.1:${server.address().port}/hooks/fail`,
		received,
		/** Waits (bounded) until a request matching `predicate` has arrived, and returns it. */
		async waitFor(predicate, what, timeoutMs = 30_000) {
			const deadline = Date.now() + timeoutMs;
			while (Date.now() < deadline) {
				const hit = received.find(predicate);
				if (hit) return hit;
				await new Promise((r) => setTimeout(r, 200));
			}
			throw new Error(
				`the receiver got no ${what} within ${timeoutMs} ms (got: ${received.map((r) => r.headers["x-webhook-event"]).join(", ") || "nothing"})`,
			);
		},
		stop: () => new Promise((resolve) => server.close(resolve)),
	};
}

/** Headless Chromium with a fresh profile; collects what the page logs as errors (CSP violations included). */
export async function startBrowser() {
	const profile = mkdtempSync(join(tmpdir(), "amb-console-chromium-"));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_FLAGS,
		viewport: { width: 1440, height: 900 },
		timeout: 60_000,
	});
	const page = context.pages()[0] ?? (await context.newPage());
	page.setDefaultTimeout(15_000);
	const problems = [];
	page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
	page.on("console", (message) => {
		// The API's 4xx answers are expected in some steps; Chromium logs each as a failed resource load.
		if (message.type() === "error" && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
	});
	mkdirSync(SCREENSHOTS, { recursive: true });
	return {
		context,
		page,
		problems,
		screenshot: (name) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true }),
		async stop() {
			await context.close().catch(() => {});
			rmSync(profile, { recursive: true, force: true });
		},
	};
}

/** A client for seeding and for checking the console's numbers against the API. */
export function apiClient(base, key) {
	return async function api(method, path, body) {
		const response = await fetch(`${base}/v1${path}`, {
			method,
			headers: {
				Authorization: `Bearer ${key}`,
				...(body === undefined ? {} : { "Content-Type": "application/json" }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		const parsed = text ? JSON.parse(text) : null;
		if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
		return parsed;
	};
}

/** Signs the console in with `key` and waits for its header: where a console test's browser starts. */
export async function signInToConsole(page, base, key) {
	await page.goto(`${base}/console`);
	await page.fill("input[name=key]", key);
	await page.click("button:has-text('Sign in')");
	await page.waitForSelector("header.top");
}

/**
 * Does `navigate` and waits until the console has drawn the page it leads to. The page shown before may be the
 * same route, already drawn (only the query changed): it is marked first, so only a new page is waited for.
 */
export async function redrawnBy(page, navigate, path = null) {
	await page.evaluate(() => document.querySelector("main#main")?.setAttribute("data-left", ""));
	await navigate();
	const route = path === null ? "" : `[data-route="${path}"]`;
	await page.waitForSelector(`main#main${route}[data-state]:not([data-left])`);
}

/**
 * Opens a console route (`#/…`) and waits until the page has drawn it. Going to the URL already shown changes
 * nothing, so that one is reloaded, to read its data again.
 */
export async function openConsoleRoute(page, base, hash) {
	const url = `${base}/console${hash}`;
	const path = hash.slice(1).split("?")[0];
	await redrawnBy(page, () => (page.url() === url ? page.reload() : page.goto(url)), path);
}
