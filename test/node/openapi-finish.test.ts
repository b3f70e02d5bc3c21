import { createRoute, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { errorResponses } from "../../src/http/errors";
import { exampleOf, finishDocument } from "../../src/http/openapi-document";
import { newRouter } from "../../src/http/router";

/** A route as a later author might write it: nothing about shared headers, no examples. */
function documentOf(route: Parameters<typeof createRoute>[0]) {
	const app = newRouter();
	app.openapi(createRoute(route), (c) => c.json({}, 200) as never);
	const raw = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
	return finishDocument(JSON.parse(JSON.stringify(raw)));
}

describe("finishing the document covers routes added later", () => {
	it("adds the shared headers, Idempotency-Key and a composed example to a new POST", () => {
		const Body = z.strictObject({
			name: z.string().min(1),
			currency: z.string().default("USD"),
			threshold: z.number().min(0),
			window_ends_at: z.string(),
		});
		const doc = documentOf({
			method: "post",
			path: "/v1/alerts",
			operationId: "createAlert",
			tags: ["Budgets"],
			summary: "Create an alert",
			request: { body: { required: true, content: { "application/json": { schema: Body } } } },
			responses: {
				201: { description: "Created", content: { "application/json": { schema: Body } } },
				...errorResponses(400, 409),
			},
		});
		const op = doc.paths["/v1/alerts"].post;
		expect(op.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
		expect(Object.keys(op.responses["201"].headers).sort()).toEqual([
			"Idempotent-Replayed",
			"X-RateLimit-Limit",
			"X-RateLimit-Remaining",
			"X-RateLimit-Reset",
			"X-Request-Id",
		]);
		expect(Object.keys(op.responses["401"].headers).sort()).toEqual(["WWW-Authenticate", "X-Request-Id"]);
		expect(op.responses["429"].headers).toHaveProperty("Retry-After");
		expect(op.responses["403"].headers).not.toHaveProperty("Idempotent-Replayed");
		expect(op.responses["500"].headers["X-RateLimit-Limit"].required).toBe(false);

		const body = op.requestBody.content["application/json"];
		expect(body.schema.properties.currency).toMatchObject({ pattern: "^[A-Z]{3}$" });
		expect(body.schema.properties.currency.default).toBeUndefined();
		expect(body.schema.properties.currency.description).toContain('Default: `"USD"`');
		expect(body.schema.required).toEqual(["name", "threshold", "window_ends_at"]);
		expect(body.schema.properties.window_ends_at.format).toBe("date-time");
		expect(body.example).toEqual({
			name: "Lead qualifier",
			threshold: 1,
			window_ends_at: "2026-11-21T10:00:00.000Z",
		});
		expect(doc.tags).toEqual([{ name: "Budgets", description: "Budgets" }]);
	});

	it("declares Idempotent-Replayed on a metering path's 200 only, where the accumulator replays", () => {
		const Event = z.object({ id: z.string() });
		const doc = documentOf({
			method: "post",
			path: "/v1/actions",
			operationId: "sendAction",
			tags: ["Metering"],
			summary: "Send an action",
			request: {
				headers: z.object({ "idempotency-key": z.string().optional() }),
				body: { required: true, content: { "application/json": { schema: Event } } },
			},
			responses: {
				200: { description: "Replay", content: { "application/json": { schema: Event } } },
				201: { description: "New", content: { "application/json": { schema: Event } } },
				...errorResponses(400),
			},
		});
		const op = doc.paths["/v1/actions"].post;
		expect(op.responses["200"].headers).toHaveProperty("Idempotent-Replayed");
		expect(op.responses["201"].headers).not.toHaveProperty("Idempotent-Replayed");
		expect(op.responses["400"].headers).not.toHaveProperty("Idempotent-Replayed");
		const headers = op.parameters.filter((p: { in: string }) => p.in === "header");
		expect(headers.map((p: { name: string }) => p.name)).toEqual(["Idempotency-Key"]);
	});

	it("keeps the stricter of two lower (or upper) bounds, as linters want one", () => {
		const Body = z.strictObject({
			size: z.number().positive().min(-1e15).max(1e15),
			ratio: z.number().min(0).lt(1).max(5),
		});
		const doc = documentOf({
			method: "post",
			path: "/v1/things",
			operationId: "createThing",
			tags: ["Things"],
			summary: "Create a thing",
			request: { body: { required: true, content: { "application/json": { schema: Body } } } },
			responses: { 201: { description: "Created", content: { "application/json": { schema: Body } } } },
		});
		const properties = doc.paths["/v1/things"].post.requestBody.content["application/json"].schema.properties;
		expect(properties.size).toEqual({ type: "number", exclusiveMinimum: 0, maximum: 1e15 });
		expect(properties.ratio).toEqual({ type: "number", minimum: 0, exclusiveMaximum: 1 });
	});

	it("composes examples that respect enums, bounds, patterns and nullability", () => {
		const doc = { components: { schemas: {} } };
		expect(
			exampleOf(doc, {
				type: "object",
				required: ["kind", "limit", "agent_key", "note", "tags"],
				properties: {
					kind: { type: "string", enum: ["b", "a"] },
					limit: { type: "integer", minimum: 5, maximum: 10 },
					agent_key: { type: "string", pattern: "^[a-z-]+-[0-9]$" },
					note: { type: ["string", "null"], maxLength: 3 },
					tags: { type: "array", items: { type: "string" }, minItems: 2 },
					optional: { type: "string" },
				},
			}),
		).toEqual({ kind: "b", limit: 5, agent_key: "lead-qualifier-eu-1", note: "not", tags: ["tags", "tags"] });
	});
});
