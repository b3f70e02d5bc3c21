import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { ERROR_CODES } from "../../src/http/errors";
import { routeAccess } from "../../src/http/permissions";
import { PORTAL_PATHS } from "../../src/portal/gate";
import { WEBHOOK_EVENT_KINDS } from "../../src/webhooks/outbox";

async function openApiDocument() {
	const response = await createApp().request("/v1/openapi.json");
	expect(response.status).toBe(200);
	return (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
}

/** An operation that overrides the document's bearer security with none: no key, no rate limit. */
const isPublic = (operation: unknown) => {
	const security = (operation as { security?: unknown[] }).security;
	return Array.isArray(security) && security.length === 0;
};

describe("OpenAPI document", () => {
	it("is valid OpenAPI 3.1", async () => {
		const validator = new Validator();
		const result = await validator.validate(await openApiDocument());
		expect(result.errors ?? []).toEqual([]);
		expect(result.valid).toBe(true);
		expect(validator.version).toBe("3.1");
	});

	it("says where the API runs: wrangler dev, and a deployment's host", async () => {
		const doc = (await openApiDocument()) as J;
		expect(doc.servers).toEqual([
			{ url: "http://localhost:8787", description: expect.stringContaining("wrangler dev") },
			{
				url: "https://{host}",
				description: expect.any(String),
				variables: { host: { default: expect.any(String), description: expect.any(String) } },
			},
		]);
	});

	it('documents GET /healthz: no key, {status: "ok"}', async () => {
		const doc = (await openApiDocument()) as J;
		const health = doc.paths["/healthz"]?.get;
		expect(health).toMatchObject({ operationId: "getHealth", security: [] });
		const schema = health.responses["200"].content["application/json"].schema;
		const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
		expect(resolved).toMatchObject({ type: "object", required: ["status"] });
		expect(resolved.properties.status).toMatchObject({ type: "string", enum: ["ok"] });
		expect(Object.keys(health.responses)).toEqual(["200"]);
		expect(Object.keys(health.responses["200"].headers)).toEqual(["X-Request-Id"]);
	});

	it("documents exactly the routes of the permission table, the customer portal's, and /healthz and Stripe's webhook as the ones needing no key", async () => {
		const doc = await openApiDocument();
		const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
			Object.entries(operations)
				.filter(([, operation]) => !isPublic(operation))
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		const portal = PORTAL_PATHS.map((path) => `GET ${path}`);
		for (const route of portal) expect(documented).toContain(route);
		const implemented = [...Object.keys(routeAccess), ...portal].filter((route) =>
			documented.includes(route),
		);
		expect(documented.sort()).toEqual(implemented.sort());
		const open = Object.entries(doc.paths).flatMap(([path, operations]) =>
			Object.entries(operations)
				.filter(([, operation]) => isPublic(operation))
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		// Stripe signs its events instead of sending a key (docs/payments.md).
		expect(open).toEqual(["GET /healthz", "POST /v1/integrations/stripe/webhook"]);
	});

	it("declares the error responses of every operation that needs a key", async () => {
		const doc = await openApiDocument();
		for (const [path, operations] of Object.entries(doc.paths)) {
			for (const [method, operation] of Object.entries(operations)) {
				if (isPublic(operation)) continue;
				const responses = (operation as { responses: Record<string, unknown> }).responses;
				for (const status of ["401", "403", "429", "500"]) {
					// A portal token reads all of its account or nothing: the portal never answers 403.
					if (status === "403" && path.startsWith("/portal/api/")) continue;
					expect(responses, `${method} ${path}`).toHaveProperty(status);
				}
			}
		}
	});
});

type J = any;

function operations(doc: J): { name: string; method: string; path: string; op: J }[] {
	return Object.entries(doc.paths as Record<string, J>).flatMap(([path, item]) =>
		Object.entries(item as Record<string, J>).map(([method, op]) => ({
			name: `${method.toUpperCase()} ${path}`,
			method,
			path,
			op,
		})),
	);
}

function headerNames(response: J): string[] {
	return Object.keys(response.headers ?? {});
}

/** Every schema object reachable from `schema`, following $refs once each, with its property name. */
function* schemas(
	doc: J,
	schema: J,
	property: string | null = null,
	seen = new Set<string>(),
): Generator<[J, string | null]> {
	if (!schema || typeof schema !== "object") return;
	if (typeof schema.$ref === "string") {
		if (seen.has(schema.$ref)) return;
		seen.add(schema.$ref);
		yield* schemas(doc, doc.components.schemas[schema.$ref.split("/").pop()], property, seen);
		return;
	}
	yield [schema, property];
	for (const [name, child] of Object.entries(schema.properties ?? {})) yield* schemas(doc, child, name, seen);
	if (schema.items) yield* schemas(doc, schema.items, null, seen);
	if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
		yield* schemas(doc, schema.additionalProperties, null, seen);
	}
	for (const key of ["oneOf", "anyOf", "allOf"])
		for (const part of schema[key] ?? []) yield* schemas(doc, part, property, seen);
}

describe("what generated clients need (each failure names the operation)", () => {
	it("gives every operation a unique camelCase operationId, a declared tag, a summary and a description", async () => {
		const doc = (await openApiDocument()) as J;
		const declaredTags = new Set((doc.tags as { name: string }[]).map((t) => t.name));
		const ids = new Map<string, string>();
		const problems: string[] = [];
		for (const { name, op } of operations(doc)) {
			const id = op.operationId;
			if (typeof id !== "string" || !/^[a-z]+[A-Z][A-Za-z0-9]*$/.test(id)) {
				problems.push(`${name}: operationId ${id} (verbNoun in camelCase, e.g. listInvoices)`);
			} else if (ids.has(id)) problems.push(`${name}: operationId ${id} is also ${ids.get(id)}'s`);
			ids.set(id, name);
			if (!op.tags?.length) problems.push(`${name}: no tag`);
			for (const tag of op.tags ?? []) if (!declaredTags.has(tag)) problems.push(`${name}: tag ${tag}`);
			if (!op.summary) problems.push(`${name}: no summary`);
			if (!/Who may call it: /.test(op.description ?? "")) {
				problems.push(`${name}: not in the permission table (src/http/permissions.ts)`);
			}
		}
		expect(problems).toEqual([]);
	});

	it("names every path parameter after the resource it identifies: `{<resource>_id}`", async () => {
		// One rule for every path, the resource's own id included: the singular of the segment before the
		// parameter, in snake_case, then _id (/v1/accounts/{account_id}/credit-grants/{credit_grant_id}).
		const doc = (await openApiDocument()) as J;
		const singular = (segment: string) => segment.replace(/-/g, "_").replace(/ies$/, "y").replace(/s$/, "");
		const problems: string[] = [];
		for (const { name, path, op } of operations(doc)) {
			const segments = path.split("/");
			for (const [i, segment] of segments.entries()) {
				const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
				if (parameter === undefined) continue;
				const expected = `${singular(segments[i - 1] ?? "")}_id`;
				if (parameter !== expected) problems.push(`${name}: {${parameter}} should be {${expected}}`);
				const declared = (op.parameters ?? []).find((p: J) => p.in === "path" && p.name === parameter);
				if (!declared?.required) problems.push(`${name}: {${parameter}} is not a required path parameter`);
			}
		}
		expect(problems).toEqual([]);
	});

	it("declares the headers every response carries, and those of 401, 429 and replays", async () => {
		const doc = (await openApiDocument()) as J;
		for (const { name, method, op } of operations(doc)) {
			for (const [status, response] of Object.entries(op.responses as Record<string, J>)) {
				const headers = headerNames(response);
				const where = `${name} → ${status}`;
				expect(headers, where).toContain("X-Request-Id");
				if (status === "401") expect(headers, where).toContain("WWW-Authenticate");
				else if (isPublic(op)) expect(headers, where).toEqual(["X-Request-Id"]);
				else
					expect(headers, where).toEqual(
						expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]),
					);
				if (status === "429") expect(headers, where).toContain("Retry-After");
				// Stripe's webhook is deduplicated by Stripe's event id, not by an Idempotency-Key.
				if (method === "post" && status.startsWith("2") && status !== "201" && !isPublic(op))
					expect(headers, where).toContain("Idempotent-Replayed");
			}
			if (method === "post") {
				const params = (op.parameters ?? []).map((p: J) =>
					p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p,
				);
				const key = params.find((p: J) => p.in === "header" && p.name.toLowerCase() === "idempotency-key");
				expect(key, `${name}: Idempotency-Key header`).toBeDefined();
				expect(key.schema, `${name}: Idempotency-Key is 1–255 characters`).toMatchObject({
					minLength: 1,
					maxLength: 255,
				});
			}
		}
	});

	it("has an example on every JSON request and response body", async () => {
		// JSON and +json media types; NDJSON (the events export) is a stream of lines, not one JSON body.
		const isJson = (type: string) => /^application\/([a-z.+-]+\+)?json\b/.test(type);
		const doc = (await openApiDocument()) as J;
		for (const { name, op } of operations(doc)) {
			for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, J>)) {
				if (!isJson(type)) continue;
				expect(media.example, `${name} request ${type}`).toBeDefined();
			}
			for (const [status, response] of Object.entries(op.responses as Record<string, J>)) {
				for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, J>)) {
					if (!isJson(type)) continue;
					expect(media.example, `${name} → ${status} ${type}`).toBeDefined();
				}
			}
		}
	});

	it("types query parameters as validation reads them: integers are never null, limit and offset bounded", async () => {
		const doc = (await openApiDocument()) as J;
		for (const { name, op } of operations(doc)) {
			for (const p of (op.parameters ?? []) as J[]) {
				if (p.in !== "query") continue;
				const types = [p.schema?.type].flat();
				expect(types, `${name} ?${p.name}`).not.toContain("null");
				// §1: 1–100; the event explorer's pages take up to 1,000 (§15).
				if (p.name === "limit") {
					const maximum = name === "GET /v1/events" ? 1000 : 100;
					expect(p.schema, name).toMatchObject({ type: "integer", minimum: 1, maximum });
				}
				if (p.name === "offset") expect(p.schema, name).toMatchObject({ type: "integer", minimum: 0 });
			}
		}
	});

	it("gives timestamps format date-time, currencies their pattern, and request-body defaults no `default` (optional in generated types)", async () => {
		const doc = (await openApiDocument()) as J;
		for (const { name, op } of operations(doc)) {
			const bodies: [string, J][] = [
				...Object.values((op.requestBody?.content ?? {}) as Record<string, J>).map((m): [string, J] => [
					"request",
					m.schema,
				]),
				...Object.entries(op.responses as Record<string, J>).flatMap(([status, r]) =>
					Object.values((r.content ?? {}) as Record<string, J>).map((m): [string, J] => [status, m.schema]),
				),
			];
			for (const [where, body] of bodies) {
				for (const [schema, property] of schemas(doc, body)) {
					if (!property || ![schema.type].flat().includes("string") || schema.enum) continue;
					if (/(^|_)at$|^timestamp$/.test(property))
						expect(schema.format, `${name} ${where} ${property}`).toBe("date-time");
					if (/(^|_)currency$/.test(property))
						expect(schema.pattern, `${name} ${where} ${property}`).toBe("^[A-Z]{3}$");
				}
				if (where === "request") {
					for (const [schema, property] of schemas(doc, body)) {
						if (property) expect(schema.default, `${name} request ${property}`).toBeUndefined();
					}
				}
			}
		}
	});

	it("lists the error codes of CONTRACT §2 as an enum", async () => {
		const doc = (await openApiDocument()) as J;
		expect(doc.components.schemas.Error.properties.error.properties.code.enum.sort()).toEqual(
			[...ERROR_CODES].sort(),
		);
	});

	it("documents the payload and signature headers of every webhook event kind", async () => {
		const doc = (await openApiDocument()) as J;
		expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_KINDS].sort());
		for (const [kind, item] of Object.entries(doc.webhooks as Record<string, J>)) {
			const op = item.post;
			expect(op.operationId, kind).toMatch(/^on[A-Z]/);
			const headers = (op.parameters as J[]).filter((p) => p.in === "header").map((p) => p.name);
			expect(headers, kind).toEqual(
				expect.arrayContaining([
					"X-Webhook-Signature",
					"X-Webhook-Event",
					"X-Webhook-Id",
					"webhook-id",
					"webhook-timestamp",
					"webhook-signature",
				]),
			);
			const body = op.requestBody.content["application/json"];
			expect(body.schema.properties.event.enum, kind).toEqual([kind]);
			expect(Object.keys(body.schema.properties).sort(), kind).toEqual([
				"data",
				"event",
				"id",
				"test",
				"timestamp",
			]);
			expect(body.example.event, kind).toBe(kind);
		}
	});
});
