import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { type Access, type RouteName, routeAccess } from "../../src/http/permissions";
import { ADMIN_KEY, call, createKey, type KeyKind } from "../helpers";

const kinds: KeyKind[] = ["sdk", "read-only", "read-write", "admin"];

function allowed(route: RouteName, kind: KeyKind): boolean {
	// Every route of the app declares its access (the first test below checks it).
	const access = routeAccess[route] as Access;
	if (kind === "sdk") return access.sdk;
	const rank = { "read-only": 0, "read-write": 1, admin: 2 };
	return rank[kind] >= rank[access.api];
}

function concretePath(route: RouteName): [string, string] {
	const [method, path] = route.split(" ") as [string, string];
	return [method, path.replace(/\{[^}]+\}/g, "does_not_exist")];
}

describe("permission matrix (§3)", () => {
	it("registers every route of the app in the permission table", () => {
		const registered = createApp()
			// The document and Stripe's webhook (signed by Stripe, no key: docs/payments.md) are before the gate.
			.routes.filter(
				(r) =>
					r.path.startsWith("/v1/") &&
					r.method !== "ALL" &&
					r.path !== "/v1/openapi.json" &&
					r.path !== "/v1/integrations/stripe/webhook",
			)
			.map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`);
		expect(registered.length).toBeGreaterThan(0);
		for (const route of registered) expect(Object.keys(routeAccess), route).toContain(route);
	});

	it("the table itself follows the contract's rules", () => {
		for (const [route, access] of Object.entries(routeAccess)) {
			const [method, path] = route.split(" ") as [string, string];
			// Every key may speak MCP; each tool then checks its own route's permission.
			if (path === "/mcp") {
				expect(access, route).toEqual({ sdk: true, api: "read-only" });
				continue;
			}
			// §18: agents ask for their entitlements with SDK keys; they reserve, release and read holds too.
			const isEvent =
				/^\/v1\/(actions|outcomes|reservations)/.test(path) ||
				path === "/v1/usage" ||
				path === "/v1/entitlements";
			expect(access.sdk, route).toBe(isEvent);
			// §15: the export of a whole day's events is for admin keys; so is the audit log. Custom model prices are
			// written by read-write keys too (§37 on §3).
			if (/^\/v1\/(api-keys|webhooks|audit-log)/.test(path) || path === "/v1/events/export")
				expect(access.api, route).toBe("admin");
			else if (method === "GET" || path === "/v1/pricing/simulate")
				expect(access.api, route).toBe("read-only");
			else expect(access.api, route).toBe("read-write");
		}
	});

	it("lets each kind of key call exactly what the table allows", async () => {
		const keys = Object.fromEntries(
			await Promise.all(kinds.map(async (k) => [k, await createKey(k)] as const)),
		);
		keys.admin = ADMIN_KEY;
		const failures: string[] = [];
		for (const route of Object.keys(routeAccess) as RouteName[]) {
			const [method, path] = concretePath(route);
			for (const kind of kinds) {
				const response = await call(method, path, { key: keys[kind] });
				const expectForbidden = !allowed(route, kind);
				if ((response.status === 403) !== expectForbidden) {
					failures.push(`${kind} ${route}: ${response.status}`);
				}
				if (expectForbidden) expect(response.body.error.code).toBe("forbidden");
			}
		}
		expect(failures).toEqual([]);
	});
});
