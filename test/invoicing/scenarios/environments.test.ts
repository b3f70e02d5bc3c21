import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	invoicesOf,
	linesOf,
	sendActions,
} from "../fixtures";

// Live and test are separate worlds (§3): usage, subscriptions, invoices and invoice numbers never mix.
const plan = {
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};

describe("scenario: test and live environments", () => {
	it("invoices each environment's usage in its own environment, with its own numbers", async () => {
		const testKey = await createKey("read-write", "test");
		const live = await customer(plan);
		const test = await customer(plan, { key: testKey });
		await sendActions(actions(live.instances[0] as string, "call", 3), "live");
		await sendActions(actions(test.instances[0] as string, "call", 5), "test");

		// Generating in test invoices only test's subscription: 5 calls × 1.00 = 5.00
		const inTest = await generate(currentPeriod(), undefined, testKey);
		expect(inTest.invoices.map((invoice) => [invoice.subscription_id, invoice.amount])).toEqual([
			[test.subscription.id, 5],
		]);
		const testInvoice = inTest.invoices[0] as (typeof inTest.invoices)[0];
		// This file's first test invoice: the test counter starts at 1, whatever live has issued.
		expect(testInvoice.number).toBe("INV-000001");
		expect(await invoicesOf(live.account.id)).toEqual([]);

		// Live sees neither the test invoice nor the test account.
		expectError(await get(`/v1/invoices/${testInvoice.id}`), 404, "not_found");
		expectError(await post(`/v1/invoices/${testInvoice.id}/pay`), 404, "not_found");
		expectError(
			await post("/v1/invoices/generate", { billing_period: currentPeriod(), account_id: test.account.id }),
			404,
			"not_found",
		);
		expect((await get(`/v1/invoices?account_id=${test.account.id}`)).body.total).toBe(0);

		// 3 calls × 1.00 = 3.00, numbered by live's own counter.
		const liveInvoice = await generateOne(currentPeriod(), live.account.id);
		expect(linesOf(liveInvoice)).toEqual([["calls", 3, 3]]);
		expect(liveInvoice.number).toBe("INV-000001");
		expect((await get(`/v1/invoices/${testInvoice.id}`, { key: testKey })).body).toEqual(testInvoice);
	});
});
