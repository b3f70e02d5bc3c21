import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import { actions, currentPeriod, customer, generateOne, sendActions, shiftPeriod } from "./fixtures";

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

describe("POST /v1/invoices/generate and amounts past what a JSON number carries exactly", () => {
	// A base fee of 1e15 and 0.01 a call: one call makes 1000000000000000.01, which a JSON number would write 1e15.
	const plan = {
		base_fee: 1e15,
		charges: [
			{
				metric: "calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.01,
			},
		],
	};

	it("refuses with 409 naming the subscription and the amount, and stores nothing", async () => {
		const { account, subscription, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "llm_call", 1));
		const error = expectError(
			await post("/v1/invoices/generate", { billing_period: currentPeriod(), account_id: account.id }),
			409,
			"conflict",
		);
		expect(error.message).toContain(subscription.id);
		expect(error.message).toContain("1000000000000000.01 USD");
		expect((await get(`/v1/invoices?account_id=${account.id}`)).body.total).toBe(0);
		const events = await env.DB.prepare(
			"SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.created' AND json_extract(data, '$.account_id') = ?1",
		)
			.bind(account.id)
			.first<{ n: number }>();
		expect(events?.n).toBe(0);
	});

	it("issues the invoice while its amount is exact", async () => {
		const { account } = await customer(plan);
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.amount).toBe(1e15);
	});
});
