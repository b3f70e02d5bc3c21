import { env } from "cloudflare:workers";
import { it } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";
import { describeWithStripe, expect, injectFault, sentToStripe, TEST_SECRET_KEY } from "./stripe";

describeWithStripe("accounts that pay through Stripe", () => {
	it("defaults to manual, with no Stripe ids", async () => {
		const key = await createKey("admin", "test");
		const account = await createAccount(key);
		expect(account).toMatchObject({
			payment_provider: "manual",
			stripe_customer_id: null,
			stripe_payment_method_id: null,
			block_on_failed_payment: false,
		});
	});

	it("makes a Stripe customer from the account, keyed by the account id", async () => {
		const key = await createKey("admin", "test");
		const account = await createAccount(key, {
			name: "Acme Robotics",
			email: "billing@acme.test",
			billing_address: { street: "1 Main St", city: "Springfield", state: "IL", zip: "62701", country: "US" },
		});
		const response = await patch(`/v1/accounts/${account.id}`, { payment_provider: "stripe" }, { key });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body.payment_provider).toBe("stripe");
		expect(response.body.stripe_customer_id).toMatch(/^cus_/);

		const [sent, ...more] = await sentToStripe(account.id);
		expect(more).toEqual([]);
		expect(sent?.method).toBe("POST");
		expect(sent?.path).toBe("/v1/customers");
		expect(sent?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
		expect(sent?.headers["idempotency-key"]).toBe(`${account.id}:customer`);
		expect(Object.fromEntries(sent?.form ?? [])).toEqual({
			name: "Acme Robotics",
			email: "billing@acme.test",
			"address[line1]": "1 Main St",
			"address[city]": "Springfield",
			"address[state]": "IL",
			"address[postal_code]": "62701",
			"address[country]": "US",
			"metadata[account_id]": account.id,
		});
		const stored = await get(`/v1/accounts/${account.id}`, { key });
		expect(stored.body.stripe_customer_id).toBe(response.body.stripe_customer_id);
	});

	it("sends no address when the account has none, and keeps a customer id it is given", async () => {
		const key = await createKey("admin", "test");
		const created = await post(
			"/v1/accounts",
			{ name: "No Address", email: "a@b.test", payment_provider: "stripe" },
			{ key },
		);
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		const [sent] = await sentToStripe(created.body.id);
		expect([...(sent?.form.keys() ?? [])].sort()).toEqual(["email", "metadata[account_id]", "name"]);

		const given = await post(
			"/v1/accounts",
			{ name: "Given", email: "g@b.test", payment_provider: "stripe", stripe_customer_id: "cus_given123" },
			{ key },
		);
		expect(given.body.stripe_customer_id).toBe("cus_given123");
		expect(await sentToStripe(given.body.id)).toEqual([]);
	});

	it("answers 409 in an environment without a Stripe key, storing nothing and calling nobody", async () => {
		const account = await createAccount(undefined, { name: "Live Co" });
		const response = await patch(`/v1/accounts/${account.id}`, { payment_provider: "stripe" });
		expectError(response, 409, "conflict");
		const after = await get(`/v1/accounts/${account.id}`);
		expect(after.body.payment_provider).toBe("manual");
		expect(await sentToStripe(account.id)).toEqual([]);
		const create = await post("/v1/accounts", { name: "X", email: "x@y.test", payment_provider: "stripe" });
		expectError(create, 409, "conflict");
	});

	it("answers 502 when Stripe refuses, storing nothing, and never shows the key", async () => {
		const key = await createKey("admin", "test");
		const account = await createAccount(key, { name: "Refused" });
		await injectFault(account.id, 400, 1, {
			error: { type: "invalid_request_error", message: `Invalid API Key provided: ${TEST_SECRET_KEY}` },
		});
		const response = await patch(`/v1/accounts/${account.id}`, { payment_provider: "stripe" }, { key });
		const error = expectError(response, 502, "payment_provider_error");
		expect(error.message).toContain("Invalid API Key provided");
		expect(JSON.stringify(response.body)).not.toContain(TEST_SECRET_KEY);
		const after = await get(`/v1/accounts/${account.id}`, { key });
		expect(after.body).toMatchObject({ payment_provider: "manual", stripe_customer_id: null });
		const { results } = await env.DB.prepare("SELECT changes FROM audit_records WHERE resource_id = ?1")
			.bind(account.id)
			.all();
		expect(JSON.stringify(results)).not.toContain("sk_test");
	});

	it("sets the payment method and the blocking flag by PATCH", async () => {
		const key = await createKey("admin", "test");
		const account = await createAccount(key);
		const response = await patch(
			`/v1/accounts/${account.id}`,
			{ stripe_payment_method_id: "pm_card_visa", block_on_failed_payment: true },
			{ key },
		);
		expect(response.body).toMatchObject({
			stripe_payment_method_id: "pm_card_visa",
			block_on_failed_payment: true,
		});
		const bad = await patch(`/v1/accounts/${account.id}`, { payment_provider: "paypal" }, { key });
		expectError(bad, 400, "validation_error");
	});
});
