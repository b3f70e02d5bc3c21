import { describe, expect, it } from "vitest";
import { createAgent, expectError, get, post } from "../helpers";

describe("report queries (§12)", () => {
	it.each([
		["/v1/reports/revenue", "end_date=2026-10-31", "start_date"],
		["/v1/reports/revenue", "start_date=2026-10-01", "end_date"],
		["/v1/reports/revenue", "start_date=2026-10-02&end_date=2026-10-01", "start_date"],
		["/v1/reports/revenue", "start_date=2026-10-01&end_date=2026-10-31&group_by=region", "group_by"],
		["/v1/reports/revenue", "start_date=2026-10-01&end_date=2026-10-31&currency=usd", "currency"],
		["/v1/reports/revenue", "start_date=01/10/2026&end_date=2026-10-31", "start_date"],
		["/v1/reports/pnl", "end_date=2026-10-31", "start_date"],
		["/v1/reports/pnl", "start_date=2026-11-01&end_date=2026-10-31", "start_date"],
		["/v1/reports/pnl", "start_date=2026-10-01&end_date=2026-10-31&currency=ABC", "currency"],
		// group_by is a grouping of §21 now; an unknown one is still refused.
		["/v1/reports/pnl", "start_date=2026-10-01&end_date=2026-10-31&group_by=cost_type", "group_by"],
		["/v1/reports/pnl", "start_date=2026-10-01&end_date=2026-10-31&interval=week", "interval"],
		["/v1/reports/pnl", "start_date=2000-01-01&end_date=2026-10-31&interval=month", "interval"],
	])("%s?%s → 400 at %s", async (path, query, field) => {
		const error = expectError(await get(`${path}?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(field);
	});

	it("reports zero revenue with margin_percent 0, and costs whose period starts in the range", async () => {
		const agent = await createAgent();
		await post("/v1/costs", { agent_id: agent.id, cost_type: "api", amount: 4.5, period: "2021-03" });
		await post("/v1/costs", { agent_id: agent.id, cost_type: "api", amount: 99, period: "2021-04" });
		// March 2021 starts within 2021-02-15..2021-03-20; April does not.
		const pnl = await get("/v1/reports/pnl?start_date=2021-02-15&end_date=2021-03-20");
		expect(pnl.status).toBe(200);
		expect(pnl.body).toEqual({
			revenue: 0,
			costs: 4.5,
			margin: -4.5,
			margin_percent: 0,
			currency: "USD",
			start_date: "2021-02-15",
			end_date: "2021-03-20",
		});
		const revenue = await get(
			"/v1/reports/revenue?start_date=2021-02-15&end_date=2021-03-20&group_by=customer",
		);
		expect(revenue.body).toEqual({
			revenue: 0,
			currency: "USD",
			start_date: "2021-02-15",
			end_date: "2021-03-20",
			group_by: "customer",
			breakdown: [],
		});
	});
});
