import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, expectError, post } from "../helpers";

// §3: a key creates keys only in its own environment; only the operator key may create keys in either.

async function keyCount(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM api_keys").first<{ n: number }>();
	return row?.n ?? 0;
}

describe("Environment escalation through key creation (§3)", () => {
	const refused = [
		{ from: "test", body: { type: "api", permission: "admin", environment: "live" } },
		{ from: "test", body: { type: "api", permission: "read-only", environment: "live" } },
		{ from: "test", body: { type: "sdk", environment: "live" } },
		{ from: "live", body: { type: "api", permission: "admin", environment: "test" } },
		{ from: "live", body: { type: "sdk", environment: "test" } },
	] as const;

	for (const { from, body } of refused) {
		it(`refuses a ${from} admin key creating a ${body.environment} ${body.type} key (403, nothing stored)`, async () => {
			const admin = await createKey("admin", from);
			const before = await keyCount();
			const response = await post("/v1/api-keys", body, { key: admin });
			const error = expectError(response, 403, "forbidden");
			expect(error.message).toContain(body.environment);
			expect(error.message).toContain(from);
			expect(await keyCount()).toBe(before);
		});
	}

	it("lets a key create keys in its own environment, named or by default", async () => {
		const admin = await createKey("admin", "test");
		const named = await post(
			"/v1/api-keys",
			{ type: "api", permission: "admin", environment: "test" },
			{ key: admin },
		);
		expect(named.status).toBe(201);
		expect(named.body.environment).toBe("test");
		const implied = await post("/v1/api-keys", { type: "sdk" }, { key: admin });
		expect(implied.status).toBe(201);
		expect(implied.body.environment).toBe("test");
		expect(implied.body.key).toMatch(/^sk_test_/);
	});

	it("lets the operator key create keys in either environment", async () => {
		for (const environment of ["live", "test"] as const) {
			const response = await post(
				"/v1/api-keys",
				{ type: "api", permission: "admin", environment },
				{ key: ADMIN_KEY },
			);
			expect(response.status).toBe(201);
			expect(response.body.environment).toBe(environment);
		}
	});
});
