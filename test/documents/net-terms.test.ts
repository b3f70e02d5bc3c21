import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, expectError, get, patch, post } from "../helpers";

// Accounts gain net_terms_days (§20): 0–365 days, default 30, on create and PATCH.
describe("accounts: net_terms_days (§20)", () => {
	it("defaults to 30 and keeps a given value", async () => {
		const plain = await createAccount();
		expect((await get(`/v1/accounts/${plain.id}`)).body.net_terms_days).toBe(30);
		for (const days of [0, 14, 365]) {
			const response = await post("/v1/accounts", {
				name: "N",
				email: "n@example.com",
				net_terms_days: days,
			});
			expect(response.status, JSON.stringify(response.body)).toBe(201);
			expect(response.body.net_terms_days).toBe(days);
		}
	});

	it("changes with PATCH and stores it", async () => {
		const account = await createAccount();
		const response = await patch(`/v1/accounts/${account.id}`, { net_terms_days: 45 });
		expect(response.status).toBe(200);
		expect(response.body.net_terms_days).toBe(45);
		const row = await env.DB.prepare("SELECT net_terms_days FROM accounts WHERE id = ?1")
			.bind(account.id)
			.first();
		expect(row).toEqual({ net_terms_days: 45 });
	});

	it.each([-1, 366, 1.5, "30", null])(
		"refuses net_terms_days %j with 400 and changes nothing",
		async (days) => {
			expectError(
				await post("/v1/accounts", { name: "N", email: "n@example.com", net_terms_days: days }),
				400,
				"validation_error",
			);
			const account = await createAccount();
			const error = expectError(
				await patch(`/v1/accounts/${account.id}`, { net_terms_days: days }),
				400,
				"validation_error",
			);
			expect(error.details?.map((d) => d.path)).toContain("net_terms_days");
			expect((await get(`/v1/accounts/${account.id}`)).body.net_terms_days).toBe(30);
		},
	);
});
