/// <reference types="node" />
/**
 * The permission table of docs/keys-and-environments.md says what the service does: each route's declared access
 * (src/http/permissions.ts, as the routers declare it) is checked against the table's rows.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { routeAccess } from "../../src/http/permissions";

createApp(); // the routers declare their routes' access as they are built

const doc = readFileSync(resolve("docs/keys-and-environments.md"), "utf8");

const permissions = doc.slice(doc.indexOf("## Permissions"), doc.indexOf("## Managing keys"));

/** The backticked items of the permission table's row whose first cell is `key`. */
function rowItems(key: string): string[] {
	const row = permissions.split("\n").find((line) => line.startsWith(`| ${key} `));
	if (!row) throw new Error(`no row for ${key}`);
	const cell = row.split("|")[2] as string;
	return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
}

const normalize = (route: string) => route.replace(/\{[a-z_]+\}/g, "{id}");
const routes = Object.entries(routeAccess).map(([route, access]) => ({ route: normalize(route), access }));
const isRoute = (item: string) => /^(GET|POST|PATCH|DELETE) \//.test(item);

describe("docs/keys-and-environments.md#permissions", () => {
	it("lists exactly the routes SDK keys may call", () => {
		const documented = rowItems("SDK key").filter(isRoute).sort();
		const sdk = routes.filter((r) => r.access.sdk).map((r) => r.route);
		expect(documented).toEqual(sdk.sort());
	});

	// `/v1/webhooks…` is every route under the path; `GET /v1/audit-log` that route alone.
	const adminOnly = rowItems("API key, `admin`")
		.filter((item) => item.startsWith("/v1/") || isRoute(item))
		.map((item) => (route: string) => {
			if (item.endsWith("…")) return route.split(" ")[1]?.startsWith(item.slice(0, -1)) ?? false;
			return route === item;
		});
	const isAdminOnly = (route: string) => adminOnly.some((matches) => matches(route));

	it("names exactly the admin-only routes", () => {
		expect(adminOnly.length).toBeGreaterThanOrEqual(4);
		for (const { route, access } of routes) {
			expect(access.api === "admin", route).toBe(isAdminOnly(route));
		}
	});

	it("gives read-only keys every other GET and what the row names, read-write keys every other write", () => {
		const readOnlyWrites = rowItems("API key, `read-only`").filter(isRoute);
		expect(readOnlyWrites).toContain("POST /v1/pricing/simulate");
		for (const { route, access } of routes) {
			if (isAdminOnly(route) || route === "POST /mcp") continue;
			const reads = route.startsWith("GET ") || readOnlyWrites.includes(route);
			expect(access.api, route).toBe(reads ? "read-only" : "read-write");
		}
	});
});
