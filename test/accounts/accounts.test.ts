import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";

const address = { street: "1 Main St", city: "Springfield", state: "IL", zip: "62701", country: "US" };

describe("accounts (§8)", () => {
	it("creates an account with the contract's shape and defaults", async () => {
		const response = await post("/v1/accounts", {
			name: "Acme",
			email: "ap@acme.example",
			billing_address: address,
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^acct_[0-9a-z]{26}$/),
			name: "Acme",
			email: "ap@acme.example",
			billing_address: address,
			currency: "USD",
			external_id: null,
			net_terms_days: 30,
			invoice_grace_days: 0,
			payment_provider: "manual",
			stripe_customer_id: null,
			stripe_payment_method_id: null,
			block_on_failed_payment: false,
			parent_account_id: null,
			billing: "self",
			use_parent_credits: false,
			created_at: expect.any(String),
		});
		expect((await get(`/v1/accounts/${response.body.id}`)).body).toEqual(response.body);
	});

	it("keeps currency and external_id", async () => {
		const account = await post("/v1/accounts", {
			name: "Kabushiki",
			email: "k@example.jp",
			currency: "JPY",
			external_id: "crm-1",
		});
		expect(account.body).toMatchObject({ currency: "JPY", external_id: "crm-1", billing_address: null });
	});

	it.each([
		[{ email: "a@example.com" }, "name"],
		[{ name: "A" }, "email"],
		[{ name: "A", email: "not-an-email" }, "email"],
		[{ name: "A", email: "a@example.com", currency: "usd" }, "currency"],
		[{ name: "A", email: "a@example.com", currency: "XXY" }, "currency"],
		[{ name: "A", email: "a@example.com", billing_address: { planet: "Mars" } }, "billing_address.planet"],
		[{ name: "A", email: "a@example.com", billing_address: { city: 42 } }, "billing_address.city"],
		[{ name: "A", email: "a@example.com", id: "acct_mine" }, "id"],
	])("rejects %j at %s", async (body, path) => {
		const error = expectError(await post("/v1/accounts", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("refuses a duplicate external_id in the same environment with 409, not across environments", async () => {
		await createAccount(undefined, { external_id: "dup-1" });
		expectError(
			await post("/v1/accounts", { name: "B", email: "b@example.com", external_id: "dup-1" }),
			409,
			"conflict",
		);
		const testKey = await createKey("read-write", "test");
		expect(
			(
				await post(
					"/v1/accounts",
					{ name: "B", email: "b@example.com", external_id: "dup-1" },
					{ key: testKey },
				)
			).status,
		).toBe(201);
	});

	it("updates an account but not its currency", async () => {
		const account = await createAccount();
		const response = await patch(`/v1/accounts/${account.id}`, {
			name: "Acme Corp",
			billing_address: { city: "Paris" },
		});
		expect(response.status).toBe(200);
		expect(response.body).toMatchObject({
			name: "Acme Corp",
			billing_address: { city: "Paris" },
			email: "billing@acme.test",
		});
		expectError(await patch(`/v1/accounts/${account.id}`, { currency: "EUR" }), 400, "validation_error");
		await createAccount(undefined, { external_id: "taken" });
		expectError(await patch(`/v1/accounts/${account.id}`, { external_id: "taken" }), 409, "conflict");
		expectError(await patch("/v1/accounts/acct_unknown", { name: "X" }), 404, "not_found");
	});

	it("lists newest first, and hides the other environment's accounts", async () => {
		const testKey = await createKey("read-write", "test");
		const hidden = await createAccount(testKey);
		const visible = await createAccount();
		const list = await get("/v1/accounts?limit=100");
		expect(list.status).toBe(200);
		expect(list.body.accounts[0].id).toBe(visible.id);
		expect(list.body.accounts.map((a: { id: string }) => a.id)).not.toContain(hidden.id);
		expect(list.body.total).toBe(list.body.accounts.length);
		expectError(await get(`/v1/accounts/${hidden.id}`), 404, "not_found");
	});
});
