/**
 * The console is static: Workers static assets serve console/public at /console, with no key and before the
 * Worker runs; whatever is not a file falls through to the Worker. In this runtime the asset side is reached
 * through the ASSETS binding (exports.default.fetch is the Worker alone). The bundle comes from
 * scripts/build-console.mjs, which `npm test` runs first.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const BASE = "https://billing.test";
const assets = (env as unknown as { ASSETS: Fetcher }).ASSETS;
const fromAssets = (path: string) => assets.fetch(new Request(`${BASE}${path}`, { redirect: "manual" }));
const fromWorker = (path: string) => exports.default.fetch(new Request(`${BASE}${path}`));

describe("GET /console", () => {
	it("serves the page without a key, with a CSP that keeps the key on this origin", async () => {
		const response = await fromAssets("/console");
		expect(response.status).toBe(200);
		expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
		const csp = response.headers.get("Content-Security-Policy") ?? "";
		for (const rule of [
			"default-src 'none'",
			"script-src 'self'",
			"connect-src 'self'",
			"frame-ancestors 'none'",
		]) {
			expect(csp).toContain(rule);
		}
		expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
		const html = await response.text();
		expect(html).toContain('<div id="app">');
		expect(html).toContain('<script type="module" src="/console/app.js">');
		expect(html).toContain('href="/console/console.css"');
	});

	it("sends /console/ and /console/index.html to the one address /console", async () => {
		for (const path of ["/console/", "/console/index.html"]) {
			const response = await fromAssets(path);
			expect(response.status, path).toBe(307);
			expect(response.headers.get("Location"), path).toBe("/console");
		}
	});

	it("serves the bundled script, with the chart library and its licence, and the stylesheet", async () => {
		const script = await fromAssets("/console/app.js");
		expect(script.status, "the bundle is missing: run `npm run build:console`").toBe(200);
		expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
		expect(script.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
		const code = await script.text();
		expect(code).toContain("/v1");
		expect(code).toContain("Authorization");
		expect(code).toMatch(/Chart\.js v4[\s\S]*MIT License/);
		const css = await fromAssets("/console/console.css");
		expect(css.status).toBe(200);
		expect(css.headers.get("Content-Type")).toMatch(/^text\/css/);
	});

	it("keeps its configuration file private and leaves unknown paths to the Worker", async () => {
		expect((await fromAssets("/_headers")).status).toBe(404);
		expect((await fromAssets("/console/missing.js")).status).toBe(404);
		expect((await fromAssets("/v1/agents")).status).toBe(404);
		// What the assets do not have, the Worker answers: the API's JSON 404, and /v1 still wants a key.
		const missing = await fromWorker("/console/missing.js");
		expect(missing.status).toBe(404);
		expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
		expect((await fromWorker("/v1/agents")).status).toBe(401);
	});
});

describe("GET /docs", () => {
	it("is the bundled reference, served from this host with a strict CSP", async () => {
		const page = await fromWorker("/docs");
		expect(page.status).toBe(200);
		const csp = page.headers.get("Content-Security-Policy") ?? "";
		for (const rule of [
			"default-src 'none'",
			"script-src 'self'",
			"connect-src 'self'",
			"frame-ancestors 'none'",
		]) {
			expect(csp).toContain(rule);
		}
		expect(csp).not.toMatch(/https?:|unsafe-eval/);
		const html = await page.text();
		expect(html).toContain('<script src="/docs/scalar.js"></script>');
		expect(html).toContain('<script src="/docs/init.js"></script>');
		// Every script and link stays on this host.
		expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

		const viewer = await fromAssets("/docs/scalar.js");
		expect(viewer.status, "the viewer is missing: run `npm run build:console`").toBe(200);
		expect(viewer.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
		expect(await viewer.text()).toContain("createApiReference");
		const init = await fromAssets("/docs/init.js");
		expect(init.status).toBe(200);
		const code = await init.text();
		expect(code).toContain('url: "/v1/openapi.json"');
		expect(code).toContain("withDefaultFonts: false");
		expect(code).toContain("servers: [{ url: window.location.origin");
	});
});
