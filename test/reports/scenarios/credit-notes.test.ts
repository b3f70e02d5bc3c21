import { afterEach, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import { actions, generateOne, linesOf, sendActions } from "../../invoicing/fixtures";
import { agentWith, clockAt, customerNamed, pnlReport, revenueReport, rowsOf } from "../fixtures";

// Revenue net of credit notes (docs/credit-notes.md): a credit note lowers the revenue of its invoice's billing
// period, customer and product, whenever it is issued; by agent it is split like the invoice's revenue.
afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: revenue net of credit notes", () => {
	it("lowers the invoice's period, customer, product and agents, split like the invoice", async () => {
		clockAt("2025-06-03T10:00:00.000Z");
		const { account, instances, plan } = await customerNamed(
			"Credited Ltd",
			{
				name: "Credited plan",
				currency: "USD",
				base_fee: 10,
				charges: [
					{
						metric: "calls",
						source: { kind: "action", type: "call", aggregate: "count" },
						model: "per_unit",
						unit_price: 1,
					},
				],
			},
			2,
		);
		const [a, b] = instances as [string, string];
		const ant = await agentWith("Ant", [a]);
		const bee = await agentWith("Bee", [b]);
		await sendActions([...actions(a, "call", 6), ...actions(b, "call", 4)]);

		clockAt("2025-07-01T00:10:00.000Z");
		const invoice = await generateOne("2025-06", account.id);
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 10],
			["calls", 10, 10],
		]);
		const june = "start_date=2025-06-01&end_date=2025-06-30";
		expect((await revenueReport(june)).revenue).toBe(20);

		// Issued in August, it still lowers June.
		clockAt("2025-08-12T09:00:00.000Z");
		const response = await post(`/v1/invoices/${invoice.id}/credit-notes`, {
			amount: 5,
			reason: "billing_error",
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);

		// 5 over the lines 10 and 10: 2.50 each. The calls' 2.50 split 6:4 → Ant 1.50, Bee 1.00.
		expect((await revenueReport(june)).revenue).toBe(15);
		expect(rowsOf(await revenueReport(`${june}&group_by=customer`))).toEqual([
			[account.id, "Credited Ltd", 15],
		]);
		expect(rowsOf(await revenueReport(`${june}&group_by=product`))).toEqual([[plan.id, "Credited plan", 15]]);
		expect(rowsOf(await revenueReport(`${june}&group_by=agent`))).toEqual([
			[null, "unattributed", 7.5],
			[ant.id, "Ant", 4.5],
			[bee.id, "Bee", 3],
		]);
		expect(await pnlReport(june)).toMatchObject({ revenue: 15, costs: 0, margin: 15 });
		const byAgent = await pnlReport(`${june}&group_by=agent`);
		expect((byAgent as unknown as { breakdown: { id: string | null; revenue: number }[] }).breakdown).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ id: null, revenue: 7.5 }),
				expect.objectContaining({ id: ant.id, revenue: 4.5 }),
				expect.objectContaining({ id: bee.id, revenue: 3 }),
			]),
		);
		const series = await pnlReport("start_date=2025-06-01&end_date=2025-08-31&interval=month");
		expect((series as unknown as { series: { period: string; revenue: number }[] }).series).toEqual([
			expect.objectContaining({ period: "2025-06", revenue: 15 }),
			expect.objectContaining({ period: "2025-07", revenue: 0 }),
			expect.objectContaining({ period: "2025-08", revenue: 0 }),
		]);

		// A second credit note of one cent: the rows still add up exactly (the reports check it).
		const cent = await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 0.01, reason: "other" });
		expect(cent.status).toBe(201);
		const after = await revenueReport(`${june}&group_by=agent`);
		expect(after.revenue).toBe(14.99);
	});
});
