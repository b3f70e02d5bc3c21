import { afterEach, describe, expect, it, vi } from "vitest";
import { actions, generateOne, linesOf, sendActions } from "../../invoicing/fixtures";
import { clockAt, customerNamed, flush, pnlReport, revenueReport, rowsOf } from "../fixtures";

// margin = revenue − costs; margin_percent = margin / revenue × 100 rounded half away from zero to 2 decimals,
// and 0 when revenue is 0 (§12). Each test has a month of its own.
afterEach(() => {
	vi.useRealTimers();
});

/** A customer billed `baseFee` a month whose one instance reported `cost` in `period`, invoiced. */
async function monthWithCost(period: string, baseFee: number, cost: number) {
	clockAt(`${period}-10T12:00:00.000Z`);
	const { account, subscription, instances } = await customerNamed(
		"Margins Inc",
		{
			name: "Flat",
			currency: "USD",
			base_fee: baseFee,
			charges: [],
		},
		1,
	);
	await sendActions(actions(instances[0] as string, "inference", 1, { cost, cost_type: "gpu" }));
	clockAt(`${period}-28T12:00:00.000Z`);
	const invoice = await generateOne(period, account.id);
	await flush({ subscriptions: [subscription.id] });
	vi.useRealTimers();
	return { account, invoice };
}

const monthRange = (period: string) => `start_date=${period}-01&end_date=${period}-28`;

describe("scenario: margins", () => {
	it("answers margin_percent 0 when revenue is 0, even with costs", async () => {
		clockAt("2024-11-05T12:00:00.000Z");
		const { account, subscription, instances } = await customerNamed(
			"Gratis",
			{
				name: "Free tier",
				currency: "USD",
				charges: [
					{
						metric: "calls",
						source: { kind: "action", type: "call", aggregate: "count" },
						model: "per_unit",
						unit_price: 0.1,
						included_quantity: 100,
					},
				],
			},
			1,
		);
		await sendActions(actions(instances[0] as string, "call", 20, { cost: 0.07 }));
		clockAt("2024-12-01T00:10:00.000Z");
		// 20 calls, 100 included: 0 billable → an invoice of 0.00
		const invoice = await generateOne("2024-11", account.id);
		expect(linesOf(invoice)).toEqual([["calls", 20, 0]]);
		await flush({ subscriptions: [subscription.id] });
		vi.useRealTimers();

		const range = "start_date=2024-11-01&end_date=2024-11-30";
		// The customer was invoiced, for nothing: it shows with 0.
		expect(rowsOf(await revenueReport(`${range}&group_by=customer`))).toEqual([[account.id, "Gratis", 0]]);
		// costs 20 × 0.07 = 1.40; margin 0 − 1.40 = −1.40; revenue 0 → margin_percent 0
		expect(await pnlReport(range)).toEqual({
			revenue: 0,
			costs: 1.4,
			margin: -1.4,
			margin_percent: 0,
			currency: "USD",
			start_date: "2024-11-01",
			end_date: "2024-11-30",
		});
	});

	it("answers zeros for a range with neither revenue nor costs", async () => {
		const range = "start_date=2019-01-01&end_date=2019-12-31";
		expect((await revenueReport(`${range}&group_by=agent`)).breakdown).toEqual([]);
		expect(await pnlReport(range)).toMatchObject({ revenue: 0, costs: 0, margin: 0, margin_percent: 0 });
	});

	it("rounds a positive margin_percent half up", async () => {
		await monthWithCost("2024-12", 8, 7.0012);
		// margin 8 − 7.0012 = 0.9988; 0.9988 / 8 × 100 = 12.485 → 12.49 (half-even would say 12.48)
		expect(await pnlReport(monthRange("2024-12"))).toMatchObject({
			revenue: 8,
			costs: 7.0012,
			margin: 0.9988,
			margin_percent: 12.49,
		});
	});

	it("rounds a negative margin_percent half away from zero", async () => {
		await monthWithCost("2025-01", 8, 9.0004);
		// margin 8 − 9.0004 = −1.0004; −1.0004 / 8 × 100 = −12.505 → −12.51 (half-even or toward +∞: −12.50)
		expect(await pnlReport(monthRange("2025-01"))).toMatchObject({
			revenue: 8,
			costs: 9.0004,
			margin: -1.0004,
			margin_percent: -12.51,
		});
	});
});
