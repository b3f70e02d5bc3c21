import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/http/auth";
import { matchRoute, mayCall } from "../../src/http/permissions";
import { inputSchemaOf, mayUseTool, toolRoutes } from "../../src/mcp/tools";
// The routes declare their access as app.ts builds them (index.ts imports it on the first request it needs it).
import "../../src/app";

// The tools are declared from the REST routes: each names a route of the permission table, takes its schema, and
// is offered to exactly the keys that route allows.
const principals: Principal[] = [
	{ type: "sdk", keyId: "key_sdk", environment: "live", permission: null },
	{ type: "api", keyId: "key_ro", environment: "live", permission: "read-only" },
	{ type: "api", keyId: "key_rw", environment: "live", permission: "read-write" },
	{ type: "api", keyId: "key_admin", environment: "test", permission: "admin" },
];

describe("the tool table", () => {
	it("names a route of the permission table for every tool, and each name once", () => {
		expect(new Set(toolRoutes.map((tool) => tool.name)).size).toBe(toolRoutes.length);
		for (const tool of toolRoutes) {
			const match = matchRoute(tool.method, tool.path);
			expect(match && "route" in match ? match.route : null, tool.name).toBe(`${tool.method} ${tool.path}`);
		}
	});

	it("offers a tool to exactly the keys its route allows", () => {
		for (const tool of toolRoutes) {
			const match = matchRoute(tool.method, tool.path);
			if (!match || !("access" in match)) throw new Error(`${tool.name}: no route`);
			for (const principal of principals) {
				expect(mayUseTool(principal, tool), `${tool.name} ${principal.keyId}`).toBe(
					mayCall(principal, match.access),
				);
			}
		}
	});

	it("gives each tool the JSON Schema of its route's zod schema, as a client sends it", () => {
		for (const tool of toolRoutes) {
			const { $schema: _, ...expected } = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" });
			// A `type` array is written as anyOf branches of one type each (errors-and-schemas.test.ts): the same values.
			expect(asTypeArrays(inputSchemaOf(tool)), tool.name).toEqual({
				...(withoutNull(expected) as object),
				type: "object",
			});
		}
	});
});

/** `{anyOf: [{type: a}, {type: b}]}` back as `{type: [a, b]}`, to compare with what zod writes. */
function asTypeArrays(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(asTypeArrays);
	if (node === null || typeof node !== "object") return node;
	const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, asTypeArrays(v)]));
	const branches = out.anyOf as Record<string, unknown>[] | undefined;
	if (branches?.every((b) => Object.keys(b).length === 1 && typeof b.type === "string")) {
		const { anyOf: _, ...rest } = out;
		return { ...rest, type: branches.map((b) => b.type) };
	}
	return out;
}

/**
 * What a tool advertises of zod's schema: a property that may be null advertises its other type alone (a call
 * omits it instead), as mcp/tools.ts documents; nulls inside values (metadata's) stay.
 */
function withoutNull(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(withoutNull);
	if (node === null || typeof node !== "object") return node;
	const out: Record<string, unknown> = Object.fromEntries(
		Object.entries(node).map(([k, v]) => [k, withoutNull(v)]),
	);
	if (Array.isArray(out.anyOf)) {
		const kept = (out.anyOf as Record<string, unknown>[]).filter((b) => b.type !== "null");
		if (kept.length === 1 && kept.length < out.anyOf.length) {
			const { anyOf: _, ...rest } = out;
			return { ...rest, ...(kept[0] as Record<string, unknown>) };
		}
	}
	if (Array.isArray(out.type)) {
		const others = (out.type as string[]).filter((t) => t !== "null");
		if (others.length === 1) return { ...out, type: others[0] };
	}
	return out;
}
