import { afterEach, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import { actions, generateOne, linesOf, sendActions } from "../../invoicing/fixtures";
import { clockAt, customerNamed, pnlReport, revenueReport, rowsOf } from "../fixtures";

// Revenue counts the lines of invoices that are not void (§12): paid and open ones count, a void one never does,
// whether it is regular or supplementary, and the invoice that replaces a void one counts in its place.
const plan = {
	name: "Metered",
	currency: "USD",
	base_fee: 30,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};
const MAY = "start_date=2025-05-01&end_date=2025-05-31";

afterEach(() => {
	vi.useRealTimers();
});

async function voidInvoice(id: string) {
	const response = await post(`/v1/invoices/${id}/void`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
}

describe("scenario: void invoices", () => {
	it("leaves void invoices out of revenue and PnL, regular or supplementary", async () => {
		clockAt("2025-05-02T10:00:00.000Z");
		const alder = await customerNamed("Alder", plan, 1);
		const birch = await customerNamed("Birch", plan, 1);
		await sendActions([
			...actions(alder.instances[0] as string, "call", 5),
			...actions(birch.instances[0] as string, "call", 2),
		]);

		clockAt("2025-06-01T01:00:00.000Z");
		// Alder: 30 + 5 × 1.00 = 35.00; Birch: 30 + 2 × 1.00 = 32.00
		const alderFirst = await generateOne("2025-05", alder.account.id);
		const birchRegular = await generateOne("2025-05", birch.account.id);
		expect([alderFirst.amount, birchRegular.amount]).toEqual([35, 32]);
		expect((await post(`/v1/invoices/${birchRegular.id}/pay`)).status).toBe(200);
		// Both count, the paid one and the open one: 35 + 32 = 67.
		expect((await revenueReport(MAY)).revenue).toBe(67);

		await voidInvoice(alderFirst.id);
		// Only Birch's paid 32.00 is left; Alder is not in the breakdown at all.
		const afterVoid = await revenueReport(`${MAY}&group_by=customer`);
		expect(rowsOf(afterVoid)).toEqual([[birch.account.id, "Birch", 32]]);
		// revenue 32, no costs: margin 32, margin_percent 100
		expect(await pnlReport(MAY)).toMatchObject({ revenue: 32, costs: 0, margin: 32, margin_percent: 100 });

		// Generating again replaces the void invoice with a new regular one, which counts: 32 + 35 = 67.
		const alderAgain = await generateOne("2025-05", alder.account.id);
		expect(alderAgain.kind).toBe("regular");
		expect(rowsOf(await revenueReport(`${MAY}&group_by=customer`))).toEqual([
			[alder.account.id, "Alder", 35],
			[birch.account.id, "Birch", 32],
		]);

		// Late usage of May → a supplementary invoice of 3 × 1.00 = 3.00, counted: 67 + 3 = 70 …
		await sendActions([
			{ agent_key: birch.instances[0] as string, action_type: "call", timestamp: "2025-05-31T22:00:00.000Z" },
			{ agent_key: birch.instances[0] as string, action_type: "call", timestamp: "2025-05-31T22:30:00.000Z" },
			{ agent_key: birch.instances[0] as string, action_type: "call", timestamp: "2025-05-31T23:00:00.000Z" },
		]);
		const supplementary = await generateOne("2025-05", birch.account.id);
		expect(supplementary.kind).toBe("supplementary");
		expect(linesOf(supplementary)).toEqual([["calls", 3, 3]]);
		const withLate = await revenueReport(`${MAY}&group_by=product`);
		expect(rowsOf(withLate)).toEqual([
			[alder.plan.id, "Metered", 35],
			[birch.plan.id, "Metered", 35],
		]);
		expect(withLate.revenue).toBe(70);

		// … and no longer once it is void: back to 67.
		await voidInvoice(supplementary.id);
		const byAgent = await revenueReport(`${MAY}&group_by=agent`);
		// Neither instance belongs to an agent: everything is unattributed.
		expect(rowsOf(byAgent)).toEqual([[null, "unattributed", 67]]);
		expect((await pnlReport(MAY)).revenue).toBe(67);
	});
});
