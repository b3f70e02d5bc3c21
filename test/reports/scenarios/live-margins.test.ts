/**
 * GET /v1/reports/margins (docs/margins.md): one billing period's revenue, costs and margin — live for the current
 * month (its upcoming invoices, costs so far), as the P&L for a past one — broken down by agent, customer, model or
 * product, rows summing exactly to the totals. Reports answer for the whole environment, and storage is shared
 * by the tests of this file: each test runs in a month of its own, later than the previous test's.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Decimal } from "../../../src/lib/decimal";
import { createKey, expectError, get } from "../../helpers";
import { actions, generate, sendActions } from "../../invoicing/fixtures";
import { agentWith, clockAt, costList, customerNamed, exactSum, pnlReport } from "../fixtures";

afterEach(() => {
	vi.useRealTimers();
});

interface MarginsRow {
	id: string | null;
	name: string;
	revenue: number;
	costs: number;
	margin: number;
	margin_percent: number;
}

interface MarginsReport extends Omit<MarginsRow, "id" | "name"> {
	billing_period: string;
	status: "open" | "closed";
	currency: string;
	breakdown: MarginsRow[];
}

/** The report, checked for what every answer must satisfy: the rows add up to the totals exactly. */
async function margins(query: string, key?: string): Promise<MarginsReport> {
	const response = await get<MarginsReport>(`/v1/reports/margins?${query}`, key ? { key } : undefined);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	const report = response.body;
	if (report.breakdown.length > 0) {
		for (const field of ["revenue", "costs", "margin"] as const) {
			expect(exactSum(report.breakdown.map((row) => row[field])), field).toBe(exactSum([report[field]]));
		}
	}
	return report;
}

const GPT4O_CALL = { model: "gpt-4o", input_tokens: 1000, output_tokens: 500, cached_input_tokens: 200 };
const MINI_CALL = { ...GPT4O_CALL, model: "gpt-4o-mini" };

const llmPlan = {
	name: "LLM plan",
	currency: "USD",
	base_fee: 5,
	charges: [
		{
			metric: "gpt_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model: "gpt-4o" } },
			model: "per_unit",
			unit_price: 0.1,
		},
		{
			metric: "mini_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model: ["gpt-4o-mini"] } },
			model: "per_unit",
			unit_price: 0.03,
		},
		{
			metric: "any_calls",
			source: {
				kind: "action",
				type: "llm_call",
				aggregate: "count",
				filter: { model: ["gpt-4o", "gpt-4o-mini"] },
			},
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};
const flatPlan = { name: "Flat plan", currency: "USD", base_fee: 10, charges: [] };

/** Two customers in the month of `at`: an LLM one (costs from model prices and metadata.cost) and a flat one. */
async function twoCustomers(at: string) {
	clockAt(at);
	const llm = await customerNamed("Acme LLM", llmPlan, 1);
	const flat = await customerNamed("Beta Flat", flatPlan, 1);
	const writer = await agentWith("Writer", llm.instances);
	const key = llm.instances[0] as string;
	await sendActions([
		...actions(key, "llm_call", 3, GPT4O_CALL),
		...actions(key, "llm_call", 2, MINI_CALL),
		// An explicit cost wins over the model's price: a cost without a model.
		...actions(key, "llm_call", 1, { model: "gpt-4o", cost: 0.2 }),
		...actions(flat.instances[0] as string, "job", 1, { cost: 1.5, cost_type: "gpu" }),
	]);
	return { llm, flat, writer };
}

describe("GET /v1/reports/margins", () => {
	it("shows the open period live: upcoming invoices, costs so far, by customer, model, agent and product", async () => {
		const { llm, flat, writer } = await twoCustomers("2025-03-10T12:00:00.000Z");
		// Revenue: Acme 5 + 4 × 0.1 + 2 × 0.03 + 6 × 0.01 = 5.52; Beta 10 → 15.52.
		// Costs: gpt-4o 3 × 0.00775 = 0.02325, mini 2 × 0.000465 = 0.00093, explicit 0.2, gpu 1.5 → 1.72418.
		// margin 13.79582; 13.79582 / 15.52 × 100 = 88.890592… → 88.89.
		const total = await margins("billing_period=2025-03");
		expect(total).toEqual({
			billing_period: "2025-03",
			status: "open",
			currency: "USD",
			revenue: 15.52,
			costs: 1.72418,
			margin: 13.79582,
			margin_percent: 88.89,
			breakdown: [],
		});

		const byModel = await margins("billing_period=2025-03&group_by=model");
		expect(byModel.breakdown).toEqual([
			{ id: null, name: "unattributed", revenue: 15.06, costs: 1.7, margin: 13.36, margin_percent: 88.71 },
			{ id: "gpt-4o", name: "gpt-4o", revenue: 0.4, costs: 0.02325, margin: 0.37675, margin_percent: 94.19 },
			{
				id: "gpt-4o-mini",
				name: "gpt-4o-mini",
				revenue: 0.06,
				costs: 0.00093,
				margin: 0.05907,
				margin_percent: 98.45,
			},
		]);

		const byCustomer = await margins("billing_period=2025-03&group_by=customer");
		expect(byCustomer.breakdown.map((row) => [row.id, row.name, row.revenue, row.costs])).toEqual([
			[flat.account.id, "Beta Flat", 10, 1.5],
			[llm.account.id, "Acme LLM", 5.52, 0.22418],
		]);
		// By agent: usage lines go to the agent of the instances, base fees to unattributed.
		const byAgent = await margins("billing_period=2025-03&group_by=agent");
		expect(byAgent.breakdown.map((row) => [row.id, row.revenue, row.costs])).toEqual([
			[null, 15, 1.5],
			[writer.id, 0.52, 0.22418],
		]);
		const byProduct = await margins("billing_period=2025-03&group_by=product");
		expect(byProduct.breakdown.map((row) => [row.id, row.name, row.revenue])).toEqual([
			[flat.plan.id, "Flat plan", 10],
			[llm.plan.id, "LLM plan", 5.52],
		]);

		// The same figures as the upcoming invoices and the cost records.
		let upcoming = Decimal.ZERO;
		for (const { subscription } of [llm, flat]) {
			const response = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
			expect(response.status).toBe(200);
			upcoming = upcoming.add(Decimal.from(response.body.amount));
		}
		const costs = await costList("start_date=2025-03-01&end_date=2025-03-31&limit=100");
		expect(upcoming.toString()).toBe(exactSum([total.revenue]));
		expect(exactSum([costs.total])).toBe(exactSum([total.costs]));

		// An event's cost shows at once: the report flushes what it rates.
		await sendActions(actions(llm.instances[0] as string, "llm_call", 1, GPT4O_CALL));
		const after = await margins("billing_period=2025-03");
		expect(after).toMatchObject({ revenue: 15.63, costs: 1.73193 });

		// An invoice issued while the month is open counts once: issued lines plus what is not billed yet.
		await generate("2025-03", flat.account.id);
		expect(await margins("billing_period=2025-03")).toEqual(after);
		expect(
			(await margins("billing_period=2025-03&group_by=customer")).breakdown.map((row) => row.revenue),
		).toEqual([10, 5.63]);
	});

	it("answers a closed period as the P&L, and the open one as the summed upcoming invoices minus costs", async () => {
		const { llm, flat } = await twoCustomers("2025-05-10T12:00:00.000Z");
		clockAt("2025-06-02T08:00:00.000Z");
		await generate("2025-05");
		const closed = await margins("billing_period=2025-05");
		const pnl = await pnlReport("start_date=2025-05-01&end_date=2025-05-31");
		expect(closed).toMatchObject({
			billing_period: "2025-05",
			status: "closed",
			revenue: pnl.revenue,
			costs: pnl.costs,
			margin: pnl.margin,
			margin_percent: pnl.margin_percent,
		});
		for (const groupBy of ["agent", "customer", "product"]) {
			const response = await get(
				`/v1/reports/pnl?start_date=2025-05-01&end_date=2025-05-31&group_by=${groupBy}`,
			);
			expect((await margins(`billing_period=2025-05&group_by=${groupBy}`)).breakdown).toEqual(
				response.body.breakdown,
			);
		}
		expect((await margins("billing_period=2025-05&group_by=model")).breakdown.map((r) => r.id)).toEqual([
			null,
			"gpt-4o",
			"gpt-4o-mini",
		]);

		// June is open: every subscription of the environment (earlier tests' too) would invoice its base fee.
		await sendActions(actions(llm.instances[0] as string, "llm_call", 2, GPT4O_CALL));
		const open = await margins("billing_period=2025-06");
		const subscriptions = (await get("/v1/subscriptions?limit=100")).body.subscriptions as { id: string }[];
		let upcoming = Decimal.ZERO;
		for (const { id } of subscriptions) {
			const response = await get(`/v1/invoices/upcoming?subscription_id=${id}`);
			expect(response.status, JSON.stringify(response.body)).toBe(200);
			upcoming = upcoming.add(Decimal.from(response.body.amount));
		}
		const costs = await costList("start_date=2025-06-01&end_date=2025-06-30&limit=100");
		expect(open.status).toBe("open");
		expect(exactSum([open.revenue])).toBe(upcoming.toString());
		expect(exactSum([open.costs])).toBe(exactSum([costs.total]));
		expect(exactSum([open.margin])).toBe(upcoming.sub(Decimal.from(costs.total)).toString());
		expect(open.costs).toBe(0.0155);
		expect(flat.subscription.id).toBeDefined();
	});

	it("answers zeros for a month with nothing, and takes a currency", async () => {
		clockAt("2025-08-10T12:00:00.000Z");
		expect(await margins("billing_period=2019-02&group_by=model")).toEqual({
			billing_period: "2019-02",
			status: "closed",
			currency: "USD",
			revenue: 0,
			costs: 0,
			margin: 0,
			margin_percent: 0,
			breakdown: [],
		});
		expect(await margins("billing_period=2019-02&currency=EUR")).toMatchObject({
			currency: "EUR",
			revenue: 0,
		});
	});

	it("refuses a missing or malformed billing_period, a future one, an unknown group_by (400) and SDK keys (403)", async () => {
		const bad = [
			"",
			"group_by=model",
			"billing_period=2025-13",
			"billing_period=2025-3",
			"billing_period=2025-03-01",
			"billing_period=march",
			"billing_period=2025-03&billing_period=2025-04",
			"billing_period=2025-03&group_by=region",
			"billing_period=2025-03&currency=usd",
			"billing_period=2025-03&start_date=2025-03-01",
			"billing_period=9999-01",
		];
		for (const query of bad) {
			const response = await get(`/v1/reports/margins?${query}`);
			expectError(response, 400, "validation_error");
		}
		const missing = await get("/v1/reports/margins");
		expect(missing.body.error.details[0].path).toBe("billing_period");
		const readOnly = await createKey("read-only");
		await margins("billing_period=2025-03", readOnly);
		expectError(
			await get("/v1/reports/margins?billing_period=2025-03", { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
	});
});
