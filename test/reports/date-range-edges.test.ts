import { describe, expect, it } from "vitest";
import { createAgent, post } from "../helpers";
import { costList, pnlReport } from "./fixtures";

// Periods are YYYY-MM with any four-digit year (a manual cost may name one), so ranges must map to periods
// correctly at both ends of that span: years 0–99 are not 1900–1999, and an offset that pushes the end of a range
// into year 10000 still covers December 9999.
async function manualCost(period: string, amount: number) {
	const agent = await createAgent();
	const response = await post("/v1/costs", { agent_id: agent.id, cost_type: "archive", amount, period });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
}

describe("date ranges at the ends of the calendar", () => {
	it("reads years 0–99 as themselves", async () => {
		await manualCost("0050-06", 1);
		await manualCost("1950-06", 2);
		const range = "start_date=0050-01-01&end_date=0050-12-31";
		expect(await pnlReport(range)).toMatchObject({ revenue: 0, costs: 1, margin: -1, margin_percent: 0 });
		expect(await costList(range)).toMatchObject({ total: 1, count: 1 });
		// Both, from the first day of year 0: 1 + 2 = 3.
		expect(await costList("start_date=0000-01-01&end_date=1999-12-31")).toMatchObject({ total: 3, count: 2 });
	});

	it("covers December 9999 when an offset pushes the end into year 10000", async () => {
		await manualCost("9999-12", 4);
		// 9999-12-31T23:00:00-05:00 is 10000-01-01T04:00:00Z.
		const range = "start_date=9999-12-01&end_date=9999-12-31T23:00:00-05:00";
		expect(await costList(range)).toMatchObject({ total: 4, count: 1 });
		expect(await pnlReport(range)).toMatchObject({ costs: 4 });
	});
});
