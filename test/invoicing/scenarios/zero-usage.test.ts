import { describe, expect, it } from "vitest";
import { currentPeriod, customer, generateOne, linesOf } from "../fixtures";

// A month without any event still gets its invoice, with every metric at 0, so the customer sees what was
// metered; only the base fee, when the plan has one, is due.
const charges = [
	{
		metric: "api_calls",
		description: "API calls",
		source: { kind: "action", type: "api_call", aggregate: "count" },
		model: "per_unit",
		unit_price: 0.01,
		included_quantity: 1000,
	},
	{
		metric: "conversions",
		source: { kind: "outcome", type: "converted_lead", aggregate: "sum" },
		model: "tiered",
		tiers: [
			{ up_to: 10, unit_price: 5, flat_fee: 20 },
			{ up_to: null, unit_price: 3 },
		],
	},
];

describe("scenario: zero usage", () => {
	it("bills only the base fee, with the usage lines at 0", async () => {
		const { account } = await customer({ base_fee: 25, charges });
		const invoice = await generateOne(currentPeriod(), account.id);
		// base fee 25.00; api_calls 0 (1,000 free) → 0.00; conversions 0 → no tier entered, no flat fee → 0.00
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 25],
			["api_calls", 0, 0],
			["conversions", 0, 0],
		]);
		expect(invoice.line_items.map((line) => line.description)).toEqual([
			"Base fee",
			"API calls — 0 units (first 1,000 included)",
			"conversions — 0 units",
		]);
		expect(invoice).toMatchObject({ kind: "regular", status: "open", amount: 25 });
	});

	it("issues an invoice of 0 without a base fee", async () => {
		const { account } = await customer({ charges });
		const invoice = await generateOne(currentPeriod(), account.id);
		// no base fee line (it is 0); both usage lines at 0 → total 0.00
		expect(linesOf(invoice)).toEqual([
			["api_calls", 0, 0],
			["conversions", 0, 0],
		]);
		// Nothing is due, so it is paid at once (§17), without a payment.
		expect(invoice).toMatchObject({
			kind: "regular",
			status: "paid",
			amount: 0,
			amount_due: 0,
			payments: [],
		});
		expect(invoice.paid_at).toBe(invoice.issued_at);
	});

	it("issues an empty invoice of 0 for a plan with neither base fee nor charges", async () => {
		const { account } = await customer({ charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice).toMatchObject({ line_items: [], amount: 0 });
	});
});
