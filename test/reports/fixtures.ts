/**
 * Builders for the cost and report scenarios. Reports answer for a whole environment, while test storage is shared
 * by the tests of one file: so every test runs on its own fixed past month, with the clock set there (only Date is
 * faked; the accumulators and the Worker run in this isolate and read the same clock), and invoices only the
 * accounts it created.
 */
import { expect, vi } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { ADMIN_KEY, createAccount, createAgent, get, post } from "../helpers";
import { createPlan, instanceKey, subscribe } from "../invoicing/fixtures";
import { instanceAccumulator, subscriptionAccumulator } from "../subscriptions/fixtures";

/** Sets the clock of the Worker and the accumulators; undo with `vi.useRealTimers()` after each test. */
export function clockAt(iso: string): void {
	vi.useFakeTimers({ toFake: ["Date"] });
	vi.setSystemTime(new Date(iso));
}

/** An agent with the given instance keys assigned to it (keys already named by a subscription are claimed). */
export async function agentWith(name: string, keys: string[], key: string = ADMIN_KEY) {
	const agent = await createAgent(key, { name });
	for (const instanceKey of keys) {
		const response = await post(`/v1/agents/${agent.id}/instances`, { key: instanceKey }, { key });
		expect([200, 201], JSON.stringify(response.body)).toContain(response.status);
		expect(response.body.agent_id).toBe(agent.id);
	}
	return agent;
}

/** Copies to D1 what the accumulators counted; GET /v1/costs reads the flushed rollups. */
export async function flush(
	targets: { subscriptions?: string[]; instances?: string[] },
	environment: "live" | "test" = "live",
): Promise<void> {
	for (const id of targets.subscriptions ?? []) await subscriptionAccumulator(id, environment).flush();
	for (const agentKey of targets.instances ?? []) await instanceAccumulator(agentKey, environment).flush();
}

export interface BreakdownItem {
	id: string | null;
	name: string;
	revenue: number;
}

export interface RevenueReport {
	revenue: number;
	currency: string;
	start_date: string;
	end_date: string;
	group_by: "agent" | "customer" | "product" | null;
	breakdown: BreakdownItem[];
}

/** Adds JSON money numbers exactly (through their decimal text), never as binary floats. */
export function exactSum(amounts: number[]): string {
	return Decimal.sum(amounts.map((amount) => Decimal.from(amount))).toString();
}

/**
 * GET /v1/reports/revenue, checked for what every answer must satisfy (§12): the breakdown sums to `revenue`
 * exactly and is sorted by revenue, largest first; without group_by it is empty.
 */
export async function revenueReport(query: string, key: string = ADMIN_KEY): Promise<RevenueReport> {
	const response = await get<RevenueReport>(`/v1/reports/revenue?${query}`, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	const report = response.body;
	if (report.group_by === null) expect(report.breakdown).toEqual([]);
	else {
		expect(exactSum(report.breakdown.map((item) => item.revenue))).toBe(exactSum([report.revenue]));
		const revenues = report.breakdown.map((item) => Decimal.from(item.revenue));
		for (let i = 1; i < revenues.length; i++) {
			expect((revenues[i - 1] as Decimal).gte(revenues[i] as Decimal)).toBe(true);
		}
	}
	return report;
}

/** The breakdown as [id, name, revenue] triples, easy to compare with hand-computed figures. */
export const rowsOf = (report: RevenueReport) =>
	report.breakdown.map((item) => [item.id, item.name, item.revenue] as const);

export interface PnlReport {
	revenue: number;
	costs: number;
	margin: number;
	margin_percent: number;
	currency: string;
	start_date: string;
	end_date: string;
}

export async function pnlReport(query: string, key: string = ADMIN_KEY): Promise<PnlReport> {
	const response = await get<PnlReport>(`/v1/reports/pnl?${query}`, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

export interface CostRecord {
	id: string;
	agent_id: string | null;
	customer_id: string | null;
	cost_type: string;
	model: string | null;
	amount: number;
	currency: string;
	period: string;
	source: "events" | "manual" | "model_prices";
}

export interface CostList {
	costs: CostRecord[];
	total: number;
	count: number;
	currency: string;
	limit: number;
	offset: number;
}

export async function costList(query: string, key: string = ADMIN_KEY): Promise<CostList> {
	const response = await get<CostList>(`/v1/costs?${query}`, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

/** Records without their ids (digests, for derived ones), in a fixed order, to compare with expected rows. */
export const costRowsOf = (list: CostList) =>
	list.costs
		.map(({ id: _, ...record }) => record)
		.sort((a, b) =>
			`${a.period}|${a.cost_type}|${a.agent_id}|${a.customer_id}`.localeCompare(
				`${b.period}|${b.cost_type}|${b.agent_id}|${b.customer_id}`,
			),
		);

/** An account named `accountName`, subscribed to a new plan with `instanceCount` fresh instances. */
export async function customerNamed(
	accountName: string,
	plan: Record<string, unknown>,
	instanceCount: number,
	key: string = ADMIN_KEY,
) {
	const ratePlan = await createPlan(plan, key);
	const account = await createAccount(key, { name: accountName, currency: ratePlan.currency });
	const instances = Array.from({ length: instanceCount }, () => instanceKey());
	const subscription = await subscribe(account.id, ratePlan.id, instances, key);
	return { plan: ratePlan, account, subscription, instances };
}
