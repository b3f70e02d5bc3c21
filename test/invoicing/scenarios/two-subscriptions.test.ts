import { describe, expect, it } from "vitest";
import { createAccount } from "../../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generate,
	instanceKey,
	invoicesOf,
	linesOf,
	sendActions,
	subscribe,
} from "../fixtures";

// One account with two subscriptions: each is invoiced on its own plan and its own instances' usage.
const perUnit = (metric: string, type: string, unitPrice: number, baseFee = 0) => ({
	base_fee: baseFee,
	charges: [
		{
			metric,
			source: { kind: "action", type, aggregate: "count" },
			model: "per_unit",
			unit_price: unitPrice,
		},
	],
});

describe("scenario: two subscriptions of one account", () => {
	it("issues one invoice per subscription, each with its own usage and plan", async () => {
		const account = await createAccount();
		const support = await createPlan(perUnit("tickets", "ticket", 0.5, 10));
		const sales = await createPlan(perUnit("emails", "email", 0.02));
		const supportBot = instanceKey("support");
		const salesBot = instanceKey("sales");
		const supportSubscription = await subscribe(account.id, support.id, [supportBot]);
		const salesSubscription = await subscribe(account.id, sales.id, [salesBot]);
		await sendActions([...actions(supportBot, "ticket", 7), ...actions(salesBot, "email", 120)]);
		// Another account's usage must stay out of this account's invoices.
		const other = await createAccount();
		const otherBot = instanceKey("other");
		await subscribe(other.id, support.id, [otherBot]);
		await sendActions(actions(otherBot, "ticket", 3));

		const { status, invoices } = await generate(currentPeriod(), account.id);
		expect(status).toBe(201);
		expect(invoices.map((invoice) => invoice.subscription_id)).toEqual([
			supportSubscription.id,
			salesSubscription.id,
		]);
		const [first, second] = invoices as [(typeof invoices)[0], (typeof invoices)[0]];
		// support: base fee 10.00 + 7 tickets × 0.50 = 3.50 → 13.50
		expect(linesOf(first)).toEqual([
			["base_fee", 1, 10],
			["tickets", 7, 3.5],
		]);
		expect(first).toMatchObject({ rate_plan_id: support.id, amount: 13.5 });
		// sales: 120 emails × 0.02 = 2.40 (no base fee)
		expect(linesOf(second)).toEqual([["emails", 120, 2.4]]);
		expect(second).toMatchObject({ rate_plan_id: sales.id, amount: 2.4 });
		// Consecutive numbers from the environment's one counter (in whichever order the two were stored).
		const numbers = [first, second].map((invoice) => Number(invoice.number.slice(4))).sort((a, b) => a - b);
		expect(numbers[1]).toBe((numbers[0] as number) + 1);

		expect(await invoicesOf(other.id)).toEqual([]);
		// Without account_id, every account is invoiced: only the other account is still due.
		const everyone = await generate(currentPeriod());
		expect(everyone.invoices.map((invoice) => [invoice.account_id, invoice.amount])).toEqual([
			// base fee 10.00 + 3 tickets × 0.50 = 1.50 → 11.50
			[other.id, 11.5],
		]);
	});
});
