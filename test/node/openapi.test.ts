import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { routeAccess } from "../../src/http/permissions";

async function openApiDocument() {
	const response = await createApp().request("/v1/openapi.json");
	expect(response.status).toBe(200);
	return (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
}

describe("OpenAPI document", () => {
	it("is valid OpenAPI 3.1", async () => {
		const validator = new Validator();
		const result = await validator.validate(await openApiDocument());
		expect(result.errors ?? []).toEqual([]);
		expect(result.valid).toBe(true);
		expect(validator.version).toBe("3.1");
	});

	it("documents exactly the routes of the permission table", async () => {
		const doc = await openApiDocument();
		const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
			Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
		);
		const implemented = Object.keys(routeAccess).filter((route) => documented.includes(route));
		expect(documented.sort()).toEqual(implemented.sort());
	});

	it("declares the error responses of every operation", async () => {
		const doc = await openApiDocument();
		for (const [path, operations] of Object.entries(doc.paths)) {
			for (const [method, operation] of Object.entries(operations)) {
				const responses = (operation as { responses: Record<string, unknown> }).responses;
				for (const status of ["401", "403", "429", "500"]) {
					expect(responses, `${method} ${path}`).toHaveProperty(status);
				}
			}
		}
	});
});
