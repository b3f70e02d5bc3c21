/** A draft invoice in another currency than its plan's converts when it is finalized (docs/currencies.md). */
import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { currentPeriod, generateOne } from "../invoicing/fixtures";
import { addRate, foreignCustomer, times } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const yesterday = () => new Date(Date.now() - DAY).toISOString();

async function draftInBilling(planCurrency: string, billing: string) {
	const customer = await foreignCustomer(
		planCurrency,
		billing,
		{ charges: [] },
		{},
		{ invoice_grace_days: 3 },
	);
	const draft = await generateOne(currentPeriod(), customer.account.id);
	expect(draft.status).toBe("draft");
	return { ...customer, draft: draft as typeof draft & { exchange_rate: { rate: number } } };
}

async function finalize(id: string) {
	const response = await post(`/v1/invoices/${id}/finalize`, {});
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

describe("a draft converts at the rate in effect when it is finalized", () => {
	it("uses a rate that came into effect after the draft was made", async () => {
		await addRate("USD", "NOK", 9.5, yesterday());
		const { draft } = await draftInBilling("USD", "NOK");
		expect(draft.exchange_rate.rate).toBe(9.5);
		expect(draft.amount).toBe(95);
		const newer = await addRate("USD", "NOK", 10.123);
		const issued = await finalize(draft.id);
		expect(issued.status).toBe("open");
		expect(issued.exchange_rate).toEqual({
			base: "USD",
			quote: "NOK",
			rate: 10.123,
			effective_at: newer.effective_at,
		});
		// 10 USD × 10.123 = 101.23 NOK.
		expect(issued.line_items).toEqual([
			expect.objectContaining({
				amount: times("10", "10.123", 2),
				original_amount: 10,
				original_currency: "USD",
			}),
		]);
		expect(issued.amount).toBe(101.23);
	});

	it("shows the rate of finalization even when the lines round to the same amounts", async () => {
		await addRate("USD", "PLN", 0.9, yesterday());
		const { draft } = await draftInBilling("USD", "PLN");
		expect(draft.amount).toBe(9);
		// 10 × 0.9001 = 9.001 → 9.00: the same line, a different rate.
		const newer = await addRate("USD", "PLN", 0.9001);
		const issued = await finalize(draft.id);
		expect(issued.amount).toBe(9);
		expect(issued.exchange_rate).toEqual({
			base: "USD",
			quote: "PLN",
			rate: 0.9001,
			effective_at: newer.effective_at,
		});
	});
});
