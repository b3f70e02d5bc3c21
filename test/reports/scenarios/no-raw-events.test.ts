import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { actions, generateOne, sendActions } from "../../invoicing/fixtures";
import { agentWith, clockAt, costList, customerNamed, flush, pnlReport, revenueReport } from "../fixtures";

// Reports read aggregates — invoice lines and the accumulators' cost rollups — never the raw events, whose
// number grows without bound. Once everything is invoiced and flushed, deleting every raw event (and the daily
// usage rollups too) changes no figure of any report.
afterEach(() => {
	vi.useRealTimers();
});

const MARCH = "start_date=2025-03-01&end_date=2025-03-31";

async function everyFigure() {
	return {
		revenue: await revenueReport(MARCH),
		byCustomer: await revenueReport(`${MARCH}&group_by=customer`),
		byProduct: await revenueReport(`${MARCH}&group_by=product`),
		byAgent: await revenueReport(`${MARCH}&group_by=agent`),
		pnl: await pnlReport(MARCH),
		costs: await costList(MARCH),
	};
}

const rowCount = async (table: string) =>
	(await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())?.n;

describe("scenario: reports without raw events", () => {
	it("stores no raw event in D1 and answers the same after usage_daily is emptied", async () => {
		clockAt("2025-03-06T09:00:00.000Z");
		const plan = {
			name: "Tokens",
			currency: "USD",
			base_fee: 5,
			charges: [
				{
					metric: "tokens",
					source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
					model: "per_unit",
					unit_price: 0.0001,
				},
			],
		};
		const first = await customerNamed("First", plan, 2);
		const second = await customerNamed("Second", plan, 1);
		await agentWith("Reader", [first.instances[0] as string, second.instances[0] as string]);
		await sendActions([
			...actions(first.instances[0] as string, "llm_call", 40, { tokens: 1000, cost: 0.03 }),
			...actions(first.instances[1] as string, "llm_call", 10, {
				tokens: 500,
				cost: 0.02,
				cost_type: "cheap",
			}),
			...actions(second.instances[0] as string, "llm_call", 25, { tokens: 2000, cost: 0.05 }),
		]);
		clockAt("2025-04-01T00:10:00.000Z");
		await generateOne("2025-03", first.account.id);
		await generateOne("2025-03", second.account.id);
		await flush({ subscriptions: [first.subscription.id, second.subscription.id] });
		vi.useRealTimers();

		const before = await everyFigure();
		// First: 5 + (40,000 + 5,000) × 0.0001 = 9.50; Second: 5 + 50,000 × 0.0001 = 10.00 → 19.50
		// Costs: 40 × 0.03 = 1.20 + 10 × 0.02 = 0.20 + 25 × 0.05 = 1.25 → 2.65; margin 16.85; 86.4102… → 86.41
		expect(before.pnl).toMatchObject({ revenue: 19.5, costs: 2.65, margin: 16.85, margin_percent: 86.41 });
		expect(before.costs).toMatchObject({ total: 2.65, count: 3 });
		// 40 + 10 + 25 events were counted, and none is in D1 (§15: the accumulators keep raw events).
		expect(await rowCount("usage_events")).toBe(0);
		expect(await rowCount("usage_daily")).toBeGreaterThan(0);

		await env.DB.prepare("DELETE FROM usage_daily").run();
		expect(await everyFigure()).toEqual(before);
	});
});
