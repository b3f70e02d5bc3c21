import { describe, expect, it } from "vitest";
import { createKey, expectError, get } from "../helpers";

// Query errors of the three report-like reads, beyond those in validation.test.ts. Reports require both dates;
// GET /v1/costs takes them as optional filters. Queries are strict: an unknown parameter is an error too.
const REVENUE = "/v1/reports/revenue";
const PNL = "/v1/reports/pnl";
const COSTS = "/v1/costs";
const RANGE = "start_date=2025-03-01&end_date=2025-03-31";

describe("report and cost queries that answer 400", () => {
	it.each([
		[REVENUE, "", ["end_date", "start_date"]],
		[PNL, "", ["end_date", "start_date"]],
		[PNL, "start_date=2025-03-01", ["end_date"]],
		[REVENUE, "group_by=customer", ["end_date", "start_date"]],
	])("%s?%s → %j missing", async (path, query, fields) => {
		const error = expectError(await get(`${path}?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path).sort()).toEqual(fields);
	});

	it.each([REVENUE, PNL, COSTS])("%s: start after end, to the millisecond", async (path) => {
		const query = "start_date=2025-03-01T10:00:00.000Z&end_date=2025-03-01T09:59:59.999Z";
		const error = expectError(await get(`${path}?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toEqual(["start_date"]);
		// A start equal to the end is a range of one instant, not an error.
		const same = "start_date=2025-03-01T10:00:00.000Z&end_date=2025-03-01T10:00:00.000Z";
		expect((await get(`${path}?${same}`)).status).toBe(200);
	});

	it.each([REVENUE, PNL, COSTS])("%s: a date-time on a day that does not exist", async (path) => {
		// Date.parse would roll February 30 over to March 2.
		const error = expectError(
			await get(`${path}?start_date=2025-02-30T10:00:00Z&end_date=2025-03-31`),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toEqual(["start_date"]);
	});

	it.each([
		[REVENUE, `${RANGE}&group_by=`, "group_by"],
		[REVENUE, `${RANGE}&group_by=Customer`, "group_by"],
		[REVENUE, `${RANGE}&group_by=agent,customer`, "group_by"],
		[REVENUE, `${RANGE}&agent_id=agt_x`, "agent_id"],
		[REVENUE, `${RANGE}&currency=EURO`, "currency"],
		[PNL, `${RANGE}&currency=usd`, "currency"],
		[PNL, `${RANGE}&limit=5`, "limit"],
		[COSTS, "group_by=agent", "group_by"],
		[COSTS, "currency=usd", "currency"],
		[COSTS, "currency=ABC", "currency"],
		[COSTS, "start_date=2025-03-01T10:00:00", "start_date"],
		[COSTS, "offset=-1", "offset"],
	])("%s?%s → 400 at %s", async (path, query, field) => {
		const error = expectError(await get(`${path}?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(field);
	});

	it("lets GET /v1/costs go without dates, or with one of them", async () => {
		for (const query of ["", "start_date=2025-03-01", "end_date=2025-03-31"]) {
			const response = await get(`${COSTS}?${query}`);
			expect(response.status, query).toBe(200);
			expect(response.body).toEqual({ costs: [], total: 0, count: 0, currency: "USD", limit: 20, offset: 0 });
		}
	});

	it("keeps reports and costs from SDK keys", async () => {
		const sdk = await createKey("sdk");
		for (const path of [`${REVENUE}?${RANGE}`, `${PNL}?${RANGE}`, `${COSTS}?${RANGE}`]) {
			expectError(await get(path, { key: sdk }), 403, "forbidden");
		}
	});
});
