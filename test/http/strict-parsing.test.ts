import { describe, expect, it } from "vitest";
import { call, expectError, get, post } from "../helpers";
import { dbFingerprint } from "../support/db-state";

// §1: integer query parameters are plain decimal digits, a scalar query parameter comes once, a body is UTF-8,
// and a POST that takes no body gets none.

describe("integer query parameters are plain decimal digits", () => {
	const bad = [
		"1e2",
		"+5",
		"0x10",
		"5.0",
		" 5",
		"5 ",
		"",
		"-1",
		"1_000",
		"٣",
		"Infinity",
		"NaN",
		"99999999999999999999",
	];
	for (const name of ["limit", "offset"]) {
		for (const value of bad) {
			it(`refuses ${name}=${JSON.stringify(value)} with a worded 400`, async () => {
				const response = await get(`/v1/agents?${name}=${encodeURIComponent(value)}`);
				const error = expectError(response, 400, "validation_error");
				expect(error.details?.[0]?.path).toBe(name);
				expect(error.message).not.toMatch(/NaN|received/);
			});
		}
	}

	it("accepts plain digits, leading zeros included", async () => {
		const response = await get("/v1/agents?limit=007&offset=0");
		expect(response.status).toBe(200);
		expect(response.body.limit).toBe(7);
	});
});

describe("a scalar query parameter comes once", () => {
	for (const query of [
		"limit=1&limit=200",
		"offset=0&offset=0",
		"status=open&status=paid",
		"account_id=a&account_id=b",
	]) {
		it(`refuses ${query} with 400 naming the parameter`, async () => {
			const path = query.startsWith("status") || query.startsWith("account") ? "/v1/invoices" : "/v1/agents";
			const response = await get(`${path}?${query}`);
			const error = expectError(response, 400, "validation_error");
			const name = query.split("=")[0] as string;
			expect(error.details?.[0]?.path).toBe(name);
			expect(error.message).toContain("more than once");
		});
	}
});

describe("JSON bodies are UTF-8", () => {
	const agent = JSON.stringify({ name: "Charset", type: "n8n" });
	for (const type of [
		"application/json; charset=utf-16",
		"application/json; charset=UTF-16LE",
		"application/json;charset=iso-8859-1",
		'application/json; charset="latin1"',
	]) {
		it(`answers 415 for ${type}, storing nothing`, async () => {
			const before = await dbFingerprint();
			const response = await call("POST", "/v1/agents", { raw: agent, headers: { "Content-Type": type } });
			const error = expectError(response, 415, "unsupported_media_type");
			expect(error.message).toContain("UTF-8");
			expect(await dbFingerprint()).toEqual(before);
		});
	}
	for (const type of [
		"application/json; charset=utf-8",
		"application/json; charset=UTF-8",
		'application/json; charset="utf-8"',
		"application/json",
	]) {
		it(`accepts ${type}`, async () => {
			const response = await call("POST", "/v1/agents", { raw: agent, headers: { "Content-Type": type } });
			expect(response.status, JSON.stringify(response.body)).toBe(201);
		});
	}
});

describe("POSTs that take no body get none", () => {
	const bodyless = ["/v1/invoices/inv_unknown/void", "/v1/webhooks/whk_unknown/deliveries/dlv_unknown/retry"];
	for (const path of bodyless) {
		for (const body of [{ amount: 1 }, [], "text", 0, null]) {
			it(`refuses ${JSON.stringify(body)} on POST ${path} with 400, changing nothing`, async () => {
				const before = await dbFingerprint();
				const error = expectError(await post(path, body), 400, "validation_error");
				expect(error.message).toContain("no request body");
				expect(await dbFingerprint()).toEqual(before);
			});
		}
		it(`passes POST ${path} without a body, or with an empty object, to the route (404 here)`, async () => {
			expectError(await call("POST", path), 404, "not_found");
			expectError(await post(path, {}), 404, "not_found");
		});
	}

	it("still reads the body of POSTs that take one", async () => {
		expect((await post("/v1/agents", { name: "Bodied", type: "n8n" })).status).toBe(201);
	});
});
