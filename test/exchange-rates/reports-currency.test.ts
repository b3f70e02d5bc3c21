/**
 * Reports answer per currency (docs/currencies.md): an invoice converted to its billing currency is revenue in
 * that currency, never in its plan's, and two currencies are never added together.
 */
import { describe, expect, it } from "vitest";
import { currentPeriod, generateOne } from "../invoicing/fixtures";
import { revenueReport, rowsOf } from "../reports/fixtures";
import { addRate, foreignCustomer } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;

describe("revenue of converted invoices", () => {
	it("counts in the billing currency, not in the plan's", async () => {
		await addRate("USD", "CHF", 0.8, new Date(Date.now() - DAY).toISOString());
		const swiss = await foreignCustomer("USD", "CHF", { charges: [] });
		const dollars = await foreignCustomer("USD", "USD", { charges: [] });
		expect(await generateOne(currentPeriod(), swiss.account.id)).toMatchObject({
			currency: "CHF",
			amount: 8,
		});
		expect(await generateOne(currentPeriod(), dollars.account.id)).toMatchObject({
			currency: "USD",
			amount: 10,
		});
		const range = `start_date=${currentPeriod()}-01&end_date=${new Date().toISOString().slice(0, 10)}`;
		const francs = await revenueReport(`${range}&group_by=customer&currency=CHF`);
		expect(francs).toMatchObject({ revenue: 8, currency: "CHF" });
		expect(rowsOf(francs).map(([id, , revenue]) => [id, revenue])).toEqual([[swiss.account.id, 8]]);
		const usd = await revenueReport(`${range}&group_by=customer`);
		expect(usd).toMatchObject({ revenue: 10, currency: "USD" });
		expect(rowsOf(usd).map(([id, , revenue]) => [id, revenue])).toEqual([[dollars.account.id, 10]]);
	});
});
