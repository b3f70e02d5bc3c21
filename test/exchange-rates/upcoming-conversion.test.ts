/** The upcoming invoice of a subscription billed in another currency than its plan's (docs/currencies.md). */
import { describe, expect, it } from "vitest";
import { expectError, get } from "../helpers";
import { actions, sendActions } from "../invoicing/fixtures";
import { addRate, foreignCustomer, over } from "./fixtures";

describe("GET /v1/invoices/upcoming in the billing currency", () => {
	it("answers 409 naming the pair without a rate, then converts each line at the rate in effect now", async () => {
		const { instance, subscription } = await foreignCustomer("USD", "HUF");
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		const path = `/v1/invoices/upcoming?subscription_id=${subscription.id}`;
		const refused = expectError(await get(path), 409, "conflict");
		expect(refused.message).toContain("no USD→HUF exchange rate in effect");
		// Only the reverse pair: each line divided by it exactly, rounded once to HUF's 2 decimals.
		const rate = await addRate("HUF", "USD", 0.0027);
		const upcoming = await get(path);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		const base = over("10", "0.0027", 2); // 3703.7037… → 3703.70
		const tokens = over("1.30", "0.0027", 2); // 481.4814… → 481.48
		expect(upcoming.body).toMatchObject({
			id: null,
			currency: "HUF",
			amount: 4185.18,
			exchange_rate: { base: "HUF", quote: "USD", rate: 0.0027, effective_at: rate.effective_at },
		});
		expect(upcoming.body.line_items).toEqual([
			expect.objectContaining({
				metric: "base_fee",
				amount: base,
				original_amount: 10,
				original_currency: "USD",
			}),
			expect.objectContaining({
				metric: "tokens",
				amount: tokens,
				original_amount: 1.3,
				original_currency: "USD",
			}),
		]);
	});
});
