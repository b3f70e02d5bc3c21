import { describe, expect, it } from "vitest";
import { expectError, get, post } from "../helpers";

// A required parameter left out is named as missing in plain words, never with zod's raw
// "Invalid input: expected string, received undefined".
describe("a required parameter left out", () => {
	it.each([
		["/v1/reports/margins", "billing_period", /^Required: the billing period, written YYYY-MM/],
		[
			"/v1/reports/margins?group_by=model",
			"billing_period",
			/^Required: the billing period, written YYYY-MM/,
		],
		["/v1/reports/revenue", "start_date", /^Required\./],
		["/v1/reports/pnl?start_date=2025-03-01", "end_date", /^Required\./],
	])("GET %s: %s is required, said plainly", async (path, field, message) => {
		const error = expectError(await get(path), 400, "validation_error");
		const detail = error.details?.find((d) => d.path === field);
		expect(detail?.message).toMatch(message);
		expect(JSON.stringify(error)).not.toMatch(/received undefined|expected string/);
		expect(error.message).toMatch(new RegExp(`^Invalid query parameters: ${field} — Required`));
	});

	it("a body field too", async () => {
		const error = expectError(await post("/v1/agents", { type: "custom" }), 400, "validation_error");
		expect(error.details).toContainEqual({ path: "name", message: "Required." });
	});

	it("a malformed billing period keeps its own message", async () => {
		const error = expectError(
			await get("/v1/reports/margins?billing_period=2026-13"),
			400,
			"validation_error",
		);
		expect(error.details).toEqual([
			{ path: "billing_period", message: "Must be a billing period written YYYY-MM, e.g. 2026-11." },
		]);
	});
});
