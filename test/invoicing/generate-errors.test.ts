import { describe, expect, it } from "vitest";
import { createKey, expectError, post } from "../helpers";
import { currentPeriod, shiftPeriod } from "./fixtures";

// POST /v1/invoices/generate refuses what it cannot invoice: months that are malformed or still to come (400),
// accounts it does not know (404).
describe("POST /v1/invoices/generate errors", () => {
	const nextMonth = shiftPeriod(currentPeriod(), 1);

	it.each([
		[{ billing_period: "2026-13" }, "billing_period"],
		[{ billing_period: "2026-00" }, "billing_period"],
		[{ billing_period: "2026-1" }, "billing_period"],
		[{ billing_period: "0099-01" }, "billing_period"],
		[{ billing_period: "2026-11-01" }, "billing_period"],
		[{ billing_period: "November" }, "billing_period"],
		[{ billing_period: 202611 }, "billing_period"],
		[{}, "billing_period"],
		[{ billing_period: "2026-01", account_id: "" }, "account_id"],
		[{ billing_period: "2026-01", status: "paid" }, "status"],
	])("rejects %j at %s with 400", async (body, path) => {
		const error = expectError(await post("/v1/invoices/generate", body), 400, "validation_error");
		expect(error.details?.map((detail) => detail.path)).toContain(path);
	});

	it("rejects a month in the future with 400, also for a far one", async () => {
		for (const period of [nextMonth, "2999-01"]) {
			const error = expectError(
				await post("/v1/invoices/generate", { billing_period: period }),
				400,
				"validation_error",
			);
			expect(error.details).toEqual([{ path: "billing_period", message: expect.stringContaining("future") }]);
		}
	});

	it("accepts the current month and a long-past one", async () => {
		for (const period of [currentPeriod(), "2001-02"]) {
			const response = await post("/v1/invoices/generate", { billing_period: period });
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			expect(response.body).toEqual({ invoices: [] });
		}
	});

	it("answers 404 for an unknown account", async () => {
		const error = expectError(
			await post("/v1/invoices/generate", { billing_period: currentPeriod(), account_id: "acct_unknown" }),
			404,
			"not_found",
		);
		expect(error.message).toContain("acct_unknown");
	});

	it("checks the period before the account", async () => {
		expectError(
			await post("/v1/invoices/generate", { billing_period: nextMonth, account_id: "acct_unknown" }),
			400,
			"validation_error",
		);
	});

	it("needs a read-write key", async () => {
		const readOnly = await createKey("read-only");
		expectError(
			await post("/v1/invoices/generate", { billing_period: currentPeriod() }, { key: readOnly }),
			403,
			"forbidden",
		);
	});
});
