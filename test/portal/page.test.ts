/**
 * The customer portal's page is static, like the console: Workers static assets serve console/public/portal at
 * /portal before the Worker runs (reached here through the ASSETS binding); the bundle comes from
 * scripts/build-console.mjs.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const BASE = "https://billing.test";
const assets = (env as unknown as { ASSETS: Fetcher }).ASSETS;
const fromAssets = (path: string) => assets.fetch(new Request(`${BASE}${path}`, { redirect: "manual" }));

describe("GET /portal", () => {
	it("serves the page with a CSP that keeps the token on this origin and nothing from elsewhere", async () => {
		const response = await fromAssets("/portal");
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
		expect(html).toContain('<script type="module" src="/portal/app.js">');
		expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
	});

	it("sends /portal/ and /portal/index.html to the one address /portal", async () => {
		for (const path of ["/portal/", "/portal/index.html"]) {
			const response = await fromAssets(path);
			expect(response.status, path).toBe(307);
			expect(response.headers.get("Location"), path).toBe("/portal");
		}
	});

	it("serves its bundle, which reads the token from the fragment and talks to /portal/api only", async () => {
		const script = await fromAssets("/portal/app.js");
		expect(script.status, "the bundle is missing: run `npm run build:console`").toBe(200);
		const code = await script.text();
		expect(code).toContain("/portal/api");
		expect(code).toContain("replaceState");
		// Not the console's shell or its chart library: the page is its own small bundle.
		expect(code).not.toContain("Chart.js");
		expect(code.length).toBeLessThan(50_000);
		expect(code).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
		expect((await fromAssets("/portal/portal.css")).status).toBe(200);
	});

	it("leaves the portal API to the Worker", async () => {
		expect((await fromAssets("/portal/api/overview")).status).toBe(404);
		const api = await exports.default.fetch(new Request(`${BASE}/portal/api/overview`));
		expect(api.status).toBe(401);
	});
});
