import { afterEach, describe, expect, it, vi } from "vitest";
import { get, patch } from "../../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	customer,
	generateOne,
	linesOf,
	sendActions,
	shiftPeriod,
} from "../fixtures";

// A plan change applies from the next billing period (§9), so each period is rated by one plan. To have a
// "previous" period with real usage, the subscription is created and used with the clock set to the middle
// of last month (only Date is faked; the events API accepts events up to 35 days old anyway).
const perCall = (unitPrice: number) => ({
	currency: "USD",
	charges: [
		{
			metric: "calls",
			description: "Agent calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: unitPrice,
		},
	],
});

afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: a plan change", () => {
	it("rates the period of the change by the old plan and the next period by the new plan", async () => {
		const thisMonth = currentPeriod();
		const lastMonth = shiftPeriod(thisMonth, -1);
		vi.useFakeTimers({ toFake: ["Date"] });
		vi.setSystemTime(new Date(`${lastMonth}-20T12:00:00.000Z`));

		const { account, subscription, plan: oldPlan, instances } = await customer(perCall(0.1));
		const newPlan = await createPlan(perCall(0.25));
		await sendActions(actions(instances[0] as string, "call", 10));
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, { rate_plan_id: newPlan.id });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body).toMatchObject({ rate_plan_id: oldPlan.id, pending_rate_plan_id: newPlan.id });
		// Still last month: these calls are rated by the old plan too.
		await sendActions(actions(instances[0] as string, "call", 2));

		vi.useRealTimers();
		await sendActions(actions(instances[0] as string, "call", 4));

		// Last month: 10 + 2 = 12 calls × 0.10 (old plan) = 1.20
		const previous = await generateOne(lastMonth, account.id);
		expect(previous.rate_plan_id).toBe(oldPlan.id);
		expect(linesOf(previous)).toEqual([["calls", 12, 1.2]]);
		expect(previous.amount).toBe(1.2);

		// This month: 4 calls × 0.25 (new plan) = 1.00
		const current = await generateOne(thisMonth, account.id);
		expect(current.rate_plan_id).toBe(newPlan.id);
		expect(linesOf(current)).toEqual([["calls", 4, 1]]);
		expect(current.amount).toBe(1);

		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.rate_plan_id).toBe(newPlan.id);
	});
});
