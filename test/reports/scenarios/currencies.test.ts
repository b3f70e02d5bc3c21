import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import { actions, generateOne, sendActions } from "../../invoicing/fixtures";
import {
	agentWith,
	clockAt,
	costList,
	costRowsOf,
	customerNamed,
	flush,
	pnlReport,
	revenueReport,
	rowsOf,
} from "../fixtures";

// A report is in one currency (default USD): invoices and cost records of any other currency are left out, not
// converted. March 2025:
//   Dollar Co (USD plan: base 10, calls 1.00): 3 calls costing 0.50 USD, 1 call costing 0.40 EUR → invoice 14.00 USD
//   Euro GmbH (EUR plan: base 20, calls 2.00): 4 calls costing 0.30 EUR, 1 call costing 1.00 (USD by default)
//                                              → invoice 20 + 5 × 2 = 30.00 EUR
//   plus a manual cost of 2.50 EUR, "hosting", for the Euro GmbH's agent.
const planIn = (currency: string, baseFee: number, unitPrice: number) => ({
	name: `Calls in ${currency}`,
	currency,
	base_fee: baseFee,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: unitPrice,
		},
	],
});
const MARCH = "start_date=2025-03-01&end_date=2025-03-31";
let world: Awaited<ReturnType<typeof seed>>;

async function seed() {
	clockAt("2025-03-03T09:00:00.000Z");
	const dollar = await customerNamed("Dollar Co", planIn("USD", 10, 1), 1);
	const euro = await customerNamed("Euro GmbH", planIn("EUR", 20, 2), 1);
	const d = dollar.instances[0] as string;
	const e = euro.instances[0] as string;
	const dollarAgent = await agentWith("Dollar agent", [d]);
	const euroAgent = await agentWith("Euro agent", [e]);
	await sendActions([
		...actions(d, "call", 3, { cost: 0.5 }),
		...actions(d, "call", 1, { cost: 0.4, cost_currency: "EUR" }),
		...actions(e, "call", 4, { cost: 0.3, cost_currency: "EUR" }),
		...actions(e, "call", 1, { cost: 1 }),
	]);
	const manual = {
		agent_id: euroAgent.id,
		cost_type: "hosting",
		amount: 2.5,
		currency: "EUR",
		period: "2025-03",
	};
	expect((await post("/v1/costs", manual)).status).toBe(201);
	clockAt("2025-04-01T00:10:00.000Z");
	const dollarInvoice = await generateOne("2025-03", dollar.account.id);
	const euroInvoice = await generateOne("2025-03", euro.account.id);
	await flush({ subscriptions: [dollar.subscription.id, euro.subscription.id] });
	vi.useRealTimers();
	return { dollar, euro, dollarAgent, euroAgent, dollarInvoice, euroInvoice };
}

beforeAll(async () => {
	world = await seed();
});
afterAll(() => {
	vi.useRealTimers();
});

describe("scenario: another currency", () => {
	it("invoices each account in its plan's currency", () => {
		expect([world.dollarInvoice.currency, world.dollarInvoice.amount]).toEqual(["USD", 14]);
		expect([world.euroInvoice.currency, world.euroInvoice.amount]).toEqual(["EUR", 30]);
	});

	it("reports USD revenue and costs by default, without the EUR ones", async () => {
		const usd = await revenueReport(`${MARCH}&group_by=customer`);
		expect(usd.currency).toBe("USD");
		expect(rowsOf(usd)).toEqual([[world.dollar.account.id, "Dollar Co", 14]]);
		// USD costs: 3 × 0.50 = 1.50 (Dollar Co) + 1.00 (Euro GmbH's call without a currency) = 2.50;
		// margin 14 − 2.50 = 11.50; 11.5 / 14 × 100 = 82.1428… → 82.14
		expect(await pnlReport(MARCH)).toMatchObject({
			revenue: 14,
			costs: 2.5,
			margin: 11.5,
			margin_percent: 82.14,
			currency: "USD",
		});
		const costs = await costList(MARCH);
		expect(costs).toMatchObject({ total: 2.5, count: 2, currency: "USD" });
		expect(costs.costs.every((record) => record.currency === "USD")).toBe(true);
	});

	it("reports EUR on request, from the EUR invoices and cost records only", async () => {
		const eur = await revenueReport(`${MARCH}&group_by=agent&currency=EUR`);
		// 20.00 base fee unattributed; 5 calls × 2.00 = 10.00 all the Euro agent's.
		expect(eur).toMatchObject({ revenue: 30, currency: "EUR" });
		expect(rowsOf(eur)).toEqual([
			[null, "unattributed", 20],
			[world.euroAgent.id, "Euro agent", 10],
		]);
		// EUR costs: 0.40 (Dollar Co's call) + 4 × 0.30 = 1.20 + hosting 2.50 = 4.10;
		// margin 30 − 4.10 = 25.90; 25.9 / 30 × 100 = 86.333… → 86.33
		expect(await pnlReport(`${MARCH}&currency=EUR`)).toMatchObject({
			revenue: 30,
			costs: 4.1,
			margin: 25.9,
			margin_percent: 86.33,
			currency: "EUR",
		});
		const costs = await costList(`${MARCH}&currency=EUR`);
		expect(costs).toMatchObject({ total: 4.1, count: 3, currency: "EUR" });
		expect(costRowsOf(costs)).toEqual([
			{
				agent_id: world.dollarAgent.id,
				customer_id: world.dollar.account.id,
				cost_type: "call",
				model: null,
				amount: 0.4,
				currency: "EUR",
				period: "2025-03",
				source: "events",
			},
			{
				agent_id: world.euroAgent.id,
				customer_id: world.euro.account.id,
				cost_type: "call",
				model: null,
				amount: 1.2,
				currency: "EUR",
				period: "2025-03",
				source: "events",
			},
			{
				agent_id: world.euroAgent.id,
				customer_id: null,
				cost_type: "hosting",
				model: null,
				amount: 2.5,
				currency: "EUR",
				period: "2025-03",
				source: "manual",
			},
		]);
	});

	it("answers zeros in a currency nobody uses", async () => {
		expect((await revenueReport(`${MARCH}&group_by=product&currency=JPY`)).revenue).toBe(0);
		expect(await pnlReport(`${MARCH}&currency=JPY`)).toMatchObject({
			revenue: 0,
			costs: 0,
			margin_percent: 0,
		});
		expect(await costList(`${MARCH}&currency=JPY`)).toMatchObject({ total: 0, count: 0, costs: [] });
	});
});
