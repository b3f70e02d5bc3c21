import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import { actions, generateOne, sendActions } from "../../invoicing/fixtures";
import {
	agentWith,
	clockAt,
	costList,
	customerNamed,
	flush,
	pnlReport,
	revenueReport,
	rowsOf,
} from "../fixtures";

// Ranges that cut between months. A billing period counts for revenue, and a cost record for PnL, when the
// period's first instant is in the range; GET /v1/costs lists a record when its period overlaps the range at all.
//
// July 2025:   4 calls, cost 0.25 each → invoice 10 + 4 × 0.50 = 12.00, event cost 1.00 (July)
// August 2025: 6 calls, cost 0.50 each → invoice 10 + 6 × 0.50 = 13.00, event cost 3.00 (August)
//              plus a manual "hosting" cost of 5.00 for August.
const plan = {
	name: "Calls",
	currency: "USD",
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.5,
		},
	],
};

let agentId: string;

beforeAll(async () => {
	clockAt("2025-07-05T12:00:00.000Z");
	const { account, subscription, instances } = await customerNamed("Cedar", plan, 1);
	const instance = instances[0] as string;
	agentId = (await agentWith("Summariser", [instance])).id;
	await sendActions(actions(instance, "call", 4, { cost: 0.25 }));
	clockAt("2025-08-10T12:00:00.000Z");
	await sendActions(actions(instance, "call", 6, { cost: 0.5 }));
	const manual = { agent_id: agentId, cost_type: "hosting", amount: 5, period: "2025-08" };
	expect((await post("/v1/costs", manual)).status).toBe(201);
	clockAt("2025-09-01T00:30:00.000Z");
	expect((await generateOne("2025-07", account.id)).amount).toBe(12);
	expect((await generateOne("2025-08", account.id)).amount).toBe(13);
	await flush({ subscriptions: [subscription.id] });
	vi.useRealTimers();
});
afterAll(() => {
	vi.useRealTimers();
});

describe("scenario: date ranges that cut between months", () => {
	it("covers both months when the range covers both", async () => {
		const range = "start_date=2025-07-01&end_date=2025-08-31";
		// 12 + 13 = 25
		expect((await revenueReport(`${range}&group_by=customer`)).revenue).toBe(25);
		// costs 1 + 3 + 5 = 9; margin 25 − 9 = 16; 16 / 25 × 100 = 64
		expect(await pnlReport(range)).toMatchObject({ revenue: 25, costs: 9, margin: 16, margin_percent: 64 });
		expect(await costList(`${range}&agent_id=${agentId}`)).toMatchObject({ total: 9, count: 3 });
	});

	it("counts only the month that starts in a range from mid-July to mid-August", async () => {
		const range = "start_date=2025-07-15&end_date=2025-08-10";
		// August 1 is in the range, July 1 is not: revenue 13.00.
		const revenue = await revenueReport(`${range}&group_by=agent`);
		// 10.00 base fee unattributed; 6 calls × 0.50 = 3.00 all the Summariser's.
		expect(rowsOf(revenue)).toEqual([
			[null, "unattributed", 10],
			[agentId, "Summariser", 3],
		]);
		// PnL costs: only periods starting in the range, August: 3 + 5 = 8; margin 13 − 8 = 5;
		// 5 / 13 × 100 = 38.4615… → 38.46
		expect(await pnlReport(range)).toMatchObject({ revenue: 13, costs: 8, margin: 5, margin_percent: 38.46 });
		// GET /v1/costs: both months overlap the range: 1 + 3 + 5 = 9.
		const listed = await costList(range);
		expect(listed).toMatchObject({ total: 9, count: 3 });
		expect(listed.costs.map((record) => [record.period, record.amount]).sort()).toEqual([
			["2025-07", 1],
			["2025-08", 3],
			["2025-08", 5],
		]);
	});

	it("counts nothing in PnL when no month starts in the range, though its costs are listed", async () => {
		const range = "start_date=2025-07-02&end_date=2025-07-31";
		expect((await revenueReport(`${range}&group_by=product`)).revenue).toBe(0);
		expect(await pnlReport(range)).toMatchObject({ revenue: 0, costs: 0, margin: 0, margin_percent: 0 });
		// July's record overlaps: 1.00.
		expect(await costList(range)).toMatchObject({ total: 1, count: 1 });
	});

	it.each([
		// 2025-07-01T02:00+02:00 is June 30 22:00 UTC: July 1 00:00 UTC is in the range.
		["start_date=2025-07-01T02:00:00%2B02:00&end_date=2025-07-31T23:59:59.999Z", 12, 1, 1],
		// One millisecond after July's first instant: only August starts in the range (which ends on Aug 1).
		["start_date=2025-07-01T00:00:00.001Z&end_date=2025-08-01", 13, 8, 9],
		// An inclusive end instant: August's first instant itself is in the range.
		["start_date=2025-07-01&end_date=2025-08-01T00:00:00Z", 25, 9, 9],
		// One millisecond earlier it is not.
		["start_date=2025-07-01&end_date=2025-07-31T23:59:59.999Z", 12, 1, 1],
		// A single day: August 1 is the first day of August.
		["start_date=2025-08-01&end_date=2025-08-01", 13, 8, 8],
	])(
		"reads the edges of %s: revenue %d, PnL costs %d, listed costs %d",
		async (range, revenue, pnlCosts, listed) => {
			expect((await revenueReport(`${range}&group_by=customer`)).revenue).toBe(revenue);
			expect(await pnlReport(range)).toMatchObject({ revenue, costs: pnlCosts });
			expect((await costList(range)).total).toBe(listed);
		},
	);
});
