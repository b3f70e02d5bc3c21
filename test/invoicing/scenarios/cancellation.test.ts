import { afterEach, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	linesOf,
	sendActions,
	shiftPeriod,
} from "../fixtures";

const plan = {
	base_fee: 20,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.5,
		},
	],
};

afterEach(() => {
	vi.useRealTimers();
});

async function cancel(subscriptionId: string) {
	const response = await post(`/v1/subscriptions/${subscriptionId}/cancel`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
}

describe("scenario: cancellation", () => {
	it("still invoices the usage received before a mid-period cancellation, and nothing after", async () => {
		const { account, subscription, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "call", 6));
		await cancel(subscription.id);
		// After the cancellation the instance belongs to no subscription: recorded, never billed.
		await sendActions(actions(instances[0] as string, "call", 4));

		const invoice = await generateOne(currentPeriod(), account.id);
		// base fee 20.00 (the month was started) + 6 calls × 0.50 = 3.00 → 23.00
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 20],
			["calls", 6, 3],
		]);
		expect(invoice.amount).toBe(23);
		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });
	});

	it("invoices a subscription cancelled last month for last month only", async () => {
		const lastMonth = shiftPeriod(currentPeriod(), -1);
		vi.useFakeTimers({ toFake: ["Date"] });
		vi.setSystemTime(new Date(`${lastMonth}-15T08:00:00.000Z`));
		const { account, subscription, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "call", 2));
		await cancel(subscription.id);
		vi.useRealTimers();

		// base fee 20.00 + 2 calls × 0.50 = 1.00 → 21.00
		expect((await generateOne(lastMonth, account.id)).amount).toBe(21);
		// Cancelled before this month started: not active in it, so no invoice at all.
		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });
	});
});
