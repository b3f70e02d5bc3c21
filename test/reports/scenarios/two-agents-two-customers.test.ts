import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { post } from "../../helpers";
import { actions, generateOne, linesOf, sendActions } from "../../invoicing/fixtures";
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

// March 2025. Two customers, each with one instance of each of two agents:
//
//   Xylo Corp (plan Starter: base fee 20, LLM calls 0.10 each)      Yonder Ltd (plan Pro: base fee 50, searches 0.25)
//     x1 → Researcher: 30 llm_call, cost 0.02 each                      y1 → Researcher: 8 search, cost 0.125 each as "serpapi"
//     x2 → Writer:     10 llm_call, cost 0.05 each as "openai"          y2 → Writer: 12 search (4 of them cost 0.30),
//                                                                                  2 llm_call, cost 0.015 each as "openai"
// plus a manual cost: Researcher, "hosting", 10.00 for March, no customer.
const starter = {
	name: "Starter",
	currency: "USD",
	base_fee: 20,
	charges: [
		{
			metric: "llm_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.1,
		},
	],
};
const pro = {
	name: "Pro",
	currency: "USD",
	base_fee: 50,
	charges: [
		{
			metric: "searches",
			source: { kind: "action", type: "search", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.25,
		},
	],
};
const MARCH = "start_date=2025-03-01&end_date=2025-03-31";

let world: Awaited<ReturnType<typeof seedMarch>>;

async function seedMarch() {
	clockAt("2025-03-01T09:00:00.000Z");
	const xylo = await customerNamed("Xylo Corp", starter, 2);
	const yonder = await customerNamed("Yonder Ltd", pro, 2);
	const [x1, x2] = xylo.instances as [string, string];
	const [y1, y2] = yonder.instances as [string, string];
	const researcher = await agentWith("Researcher", [x1, y1]);
	const writer = await agentWith("Writer", [x2, y2]);

	clockAt("2025-03-11T14:00:00.000Z");
	await sendActions([
		...actions(x1, "llm_call", 30, { cost: 0.02 }),
		...actions(x2, "llm_call", 10, { cost: 0.05, cost_type: "openai" }),
	]);
	clockAt("2025-03-24T08:30:00.000Z");
	await sendActions([
		...actions(y1, "search", 8, { cost: 0.125, cost_type: "serpapi" }),
		...actions(y2, "search", 4, { cost: 0.3 }),
		...actions(y2, "search", 8),
		...actions(y2, "llm_call", 2, { cost: 0.015, cost_type: "openai", tokens: 900 }),
	]);
	const manual = await post("/v1/costs", {
		agent_id: researcher.id,
		cost_type: "hosting",
		amount: 10,
		period: "2025-03",
	});
	expect(manual.status).toBe(201);

	clockAt("2025-04-01T00:10:00.000Z");
	const xyloInvoice = await generateOne("2025-03", xylo.account.id);
	const yonderInvoice = await generateOne("2025-03", yonder.account.id);
	// Invoicing flushed both subscriptions' accumulators; flushing again is harmless and makes the costs certain.
	await flush({ subscriptions: [xylo.subscription.id, yonder.subscription.id] });
	vi.useRealTimers();
	return { xylo, yonder, researcher, writer, xyloInvoice, yonderInvoice, manualId: manual.body.id as string };
}

beforeAll(async () => {
	world = await seedMarch();
});
afterAll(() => {
	vi.useRealTimers();
});

describe("scenario: two agents serving two customers for a month", () => {
	it("invoices each customer for its month", () => {
		// Xylo: base fee 20.00 + LLM calls (30 + 10) × 0.10 = 4.00 → 24.00
		expect(linesOf(world.xyloInvoice)).toEqual([
			["base_fee", 1, 20],
			["llm_calls", 40, 4],
		]);
		// Yonder: base fee 50.00 + searches (8 + 12) × 0.25 = 5.00 → 55.00 (its plan does not bill llm_call)
		expect(linesOf(world.yonderInvoice)).toEqual([
			["base_fee", 1, 50],
			["searches", 20, 5],
		]);
	});

	it("lists each agent's costs: one record per customer, cost type and month, plus the manual one", async () => {
		const { researcher, writer, xylo, yonder } = world;
		const ofResearcher = await costList(`agent_id=${researcher.id}&${MARCH}`);
		// Researcher: llm_call 30 × 0.02 = 0.60 (Xylo) + serpapi 8 × 0.125 = 1.00 (Yonder) + hosting 10.00 = 11.60
		expect(ofResearcher).toMatchObject({ total: 11.6, count: 3, currency: "USD", limit: 20, offset: 0 });
		expect(costRowsOf(ofResearcher)).toEqual([
			row(researcher.id, null, "hosting", 10, "manual"),
			row(researcher.id, xylo.account.id, "llm_call", 0.6),
			row(researcher.id, yonder.account.id, "serpapi", 1),
		]);
		for (const record of ofResearcher.costs) expect(record.id).toMatch(/^cost_[0-9a-z]{26}$/);
		expect(ofResearcher.costs.map((r) => r.id)).toContain(world.manualId);

		const ofWriter = await costList(`agent_id=${writer.id}&${MARCH}`);
		// Writer: openai 10 × 0.05 = 0.50 (Xylo) + search 4 × 0.30 = 1.20 + openai 2 × 0.015 = 0.03 (Yonder) = 1.73
		expect(ofWriter).toMatchObject({ total: 1.73, count: 3 });
		expect(costRowsOf(ofWriter)).toEqual([
			row(writer.id, xylo.account.id, "openai", 0.5),
			row(writer.id, yonder.account.id, "openai", 0.03),
			row(writer.id, yonder.account.id, "search", 1.2),
		]);
		// A derived record has no row of its own; its id is stable from one read to the next.
		expect((await costList(`agent_id=${writer.id}&${MARCH}`)).costs).toEqual(ofWriter.costs);
	});

	it("lists each customer's costs, whichever agent incurred them", async () => {
		const { researcher, writer, xylo, yonder } = world;
		const ofXylo = await costList(`customer_id=${xylo.account.id}&${MARCH}`);
		// Xylo: 0.60 (Researcher, llm_call) + 0.50 (Writer, openai) = 1.10
		expect(ofXylo).toMatchObject({ total: 1.1, count: 2 });
		expect(costRowsOf(ofXylo)).toEqual([
			row(researcher.id, xylo.account.id, "llm_call", 0.6),
			row(writer.id, xylo.account.id, "openai", 0.5),
		]);
		const ofYonder = await costList(`customer_id=${yonder.account.id}&${MARCH}`);
		// Yonder: 1.00 (serpapi) + 1.20 (search) + 0.03 (openai) = 2.23
		expect(ofYonder).toMatchObject({ total: 2.23, count: 3 });
		const both = await costList(`agent_id=${writer.id}&customer_id=${yonder.account.id}`);
		// Both filters at once, with no dates (every period): 1.20 + 0.03 = 1.23
		expect(both).toMatchObject({ total: 1.23, count: 2 });
		// Everything of March: 11.60 + 1.73 = 13.33, paged two at a time while total and count cover all six.
		const page = await costList(`${MARCH}&limit=2&offset=4`);
		expect(page).toMatchObject({ total: 13.33, count: 6, limit: 2, offset: 4 });
		expect(page.costs).toHaveLength(2);
	});

	it("reports revenue in total and per customer, product and agent", async () => {
		const { xylo, yonder, researcher, writer } = world;
		// 24.00 + 55.00 = 79.00
		const total = await revenueReport(MARCH);
		expect(total).toEqual({
			revenue: 79,
			currency: "USD",
			start_date: "2025-03-01",
			end_date: "2025-03-31",
			group_by: null,
			breakdown: [],
		});

		const byCustomer = await revenueReport(`${MARCH}&group_by=customer`);
		expect(byCustomer.revenue).toBe(79);
		expect(rowsOf(byCustomer)).toEqual([
			[yonder.account.id, "Yonder Ltd", 55],
			[xylo.account.id, "Xylo Corp", 24],
		]);

		const byProduct = await revenueReport(`${MARCH}&group_by=product`);
		expect(rowsOf(byProduct)).toEqual([
			[yonder.plan.id, "Pro", 55],
			[xylo.plan.id, "Starter", 24],
		]);

		// Base fees belong to no agent: 20 + 50 = 70.00 unattributed.
		// LLM calls 4.00 by quantity: Researcher 30/40 → 3.00, Writer 10/40 → 1.00.
		// Searches 5.00 by quantity: Researcher 8/20 → 2.00, Writer 12/20 → 3.00.
		// Researcher 3.00 + 2.00 = 5.00, Writer 1.00 + 3.00 = 4.00; 70 + 5 + 4 = 79.
		const byAgent = await revenueReport(`${MARCH}&group_by=agent`);
		expect(rowsOf(byAgent)).toEqual([
			[null, "unattributed", 70],
			[researcher.id, "Researcher", 5],
			[writer.id, "Writer", 4],
		]);
	});

	it("reports profit and loss: revenue, costs, margin and margin_percent", async () => {
		// revenue 79.00; costs 0.60 + 1.00 + 10.00 + 0.50 + 1.20 + 0.03 = 13.33; margin 79 − 13.33 = 65.67;
		// margin_percent 65.67 / 79 × 100 = 83.1265… → 83.13
		expect(await pnlReport(MARCH)).toEqual({
			revenue: 79,
			costs: 13.33,
			margin: 65.67,
			margin_percent: 83.13,
			currency: "USD",
			start_date: "2025-03-01",
			end_date: "2025-03-31",
		});
	});
});

function row(
	agentId: string,
	customerId: string | null,
	costType: string,
	amount: number,
	source: "events" | "manual" = "events",
) {
	return {
		agent_id: agentId,
		customer_id: customerId,
		cost_type: costType,
		model: null,
		amount,
		currency: "USD",
		period: "2025-03",
		source,
	};
}
