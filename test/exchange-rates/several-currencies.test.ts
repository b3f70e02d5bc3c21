import { describe, expect, it } from "vitest";
import { createAccount, expectError, get, post } from "../helpers";
import { createPlan, currentPeriod, instanceKey } from "../invoicing/fixtures";
import { addRate } from "./fixtures";

async function grant(accountId: string, body: Record<string, unknown>) {
	const response = await post(`/v1/accounts/${accountId}/credit-grants`, body);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; currency: string; remaining: number };
}

describe("several currencies on one account", () => {
	it("keeps grants and balances per currency; only grants in the invoice's currency pay it", async () => {
		await addRate("USD", "EUR", 0.9, "2020-01-01T00:00:00Z");
		const account = await createAccount();
		const dollars = await grant(account.id, { amount: 100 });
		const euros = await grant(account.id, { amount: 50, currency: "EUR" });
		expect([dollars.currency, euros.currency]).toEqual(["USD", "EUR"]);
		expectError(
			await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5, currency: "eur" }),
			400,
			"validation_error",
		);

		const plan = await createPlan({ currency: "USD", base_fee: 10, charges: [] });
		for (const billing_currency of ["USD", "EUR"]) {
			const made = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.id,
				agent_instance_ids: [instanceKey()],
				billing_currency,
			});
			expect(made.status, JSON.stringify(made.body)).toBe(201);
		}
		const pending = await get(`/v1/accounts/${account.id}/balance?currency=EUR`);
		expect(pending.body).toEqual({
			account_id: account.id,
			currency: "EUR",
			available: 50,
			pending_usage: 9,
			projected: 41,
		});

		const generated = await post("/v1/invoices/generate", {
			billing_period: currentPeriod(),
			account_id: account.id,
		});
		expect(generated.status, JSON.stringify(generated.body)).toBe(201);
		const invoices = generated.body.invoices as {
			currency: string;
			amount: number;
			credits_applied: number;
		}[];
		const byCurrency = Object.fromEntries(invoices.map((i) => [i.currency, i]));
		expect(byCurrency.USD).toMatchObject({ amount: 10, credits_applied: 10 });
		expect(byCurrency.EUR).toMatchObject({ amount: 9, credits_applied: 9 });

		const usd = await get(`/v1/accounts/${account.id}/balance`);
		expect(usd.body).toMatchObject({ currency: "USD", available: 90, pending_usage: 0 });
		const eur = await get(`/v1/accounts/${account.id}/balance?currency=EUR`);
		expect(eur.body).toMatchObject({ currency: "EUR", available: 41, pending_usage: 0 });
		expectError(await get(`/v1/accounts/${account.id}/balance?currency=XXX`), 400, "validation_error");
	});

	it("answers the balance 409 naming the pair when usage cannot be converted now", async () => {
		const account = await createAccount();
		const plan = await createPlan({ currency: "USD", base_fee: 10, charges: [] });
		await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [instanceKey()],
			billing_currency: "NZD",
		});
		const error = expectError(await get(`/v1/accounts/${account.id}/balance?currency=NZD`), 409, "conflict");
		expect(error.message).toContain("no USD→NZD exchange rate in effect");
		expect((await get(`/v1/accounts/${account.id}/balance`)).status).toBe(200);
	});
});
