/**
 * Scenario: plan changes "now" split the billing period (docs/plan-versions.md#changing-now). The clock is set
 * to September 2026 (30 days), so that the halves and thirds of the contract's examples are exact.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { get, post } from "../../helpers";
import { createPlan, customer, generateOne, type Invoice, sendActions } from "../fixtures";

const PERIOD = "2026-09";
const at = (day: number, time = "00:00:00.000") => `${PERIOD}-${String(day).padStart(2, "0")}T${time}Z`;
const setClock = (iso: string) => vi.setSystemTime(new Date(iso));

/** Calls at $`price` each after `included` free ones. */
const callsPlan = (name: string, baseFee: number, price: number, included = 0) => ({
	name,
	currency: "USD",
	base_fee: baseFee,
	charges: [
		{
			metric: "calls",
			description: "Agent calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: price,
			included_quantity: included,
		},
	],
});

async function newVersion(id: string, body: Record<string, unknown>) {
	const response = await post(`/v1/pricing/rate-plans/${id}/versions`, body);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
}

async function changeNow(subscriptionId: string, body: Record<string, unknown> = {}) {
	const response = await post(`/v1/subscriptions/${subscriptionId}/change-plan`, { ...body, at: "now" });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

const calls = (agentKey: string, day: number, n: number) =>
	Array.from({ length: n }, (_, i) => ({
		agent_key: agentKey,
		action_type: "call",
		timestamp: at(day, `12:00:${String(i % 60).padStart(2, "0")}.000`),
	}));

const described = (invoice: Invoice) =>
	invoice.line_items.map((line) => [line.description, line.quantity, line.amount]);

afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: a plan change now", () => {
	it("bills $20 moved halfway through a 30-day month to a $50 version as 10 + 25 = 35", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1));
		const { plan, account, subscription } = await customer({
			name: "Growth",
			currency: "USD",
			base_fee: 20,
			charges: [],
		});
		await newVersion(plan.id, { name: "Growth", currency: "USD", base_fee: 50, charges: [] });
		setClock(at(16));
		await changeNow(subscription.id);
		vi.useRealTimers();
		const invoice = await generateOne(PERIOD, account.id);
		expect(invoice.kind).toBe("regular");
		expect(invoice.rate_plan_id).toBe(plan.id);
		expect(described(invoice)).toEqual([
			["Base fee (1–15 Sep, Growth v1)", 1, 10],
			["Base fee (16–30 Sep, Growth v2)", 1, 25],
		]);
		expect(invoice.amount).toBe(35);
		// Generating again bills nothing more.
		const again = await post("/v1/invoices/generate", { billing_period: PERIOD, account_id: account.id });
		expect(again.status).toBe(200);
	});

	it("rates the usage of each of three parts on its own, tiers and included units from zero", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1));
		const { plan, account, subscription, instances } = await customer(callsPlan("Starter", 30, 1, 2));
		const agent = instances[0] as string;
		const scale = await createPlan(callsPlan("Scale", 90, 0.5, 0));
		await newVersion(plan.id, callsPlan("Starter", 60, 2, 2));
		setClock(at(5, "13:00:00.000"));
		await sendActions(calls(agent, 5, 5));
		setClock(at(11));
		await changeNow(subscription.id);
		setClock(at(15, "13:00:00.000"));
		await sendActions(calls(agent, 15, 4));
		setClock(at(21));
		await changeNow(subscription.id, { rate_plan_id: scale.id });
		setClock(at(25, "13:00:00.000"));
		await sendActions(calls(agent, 25, 6));
		// Late: timestamped in the first part, sent in the third.
		await sendActions(calls(agent, 3, 1));
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		setClock("2026-10-01T00:10:00.000Z");
		const invoice = await generateOne(PERIOD, account.id);
		// Part 1: 6 calls, 2 free, $1 → 4; part 2: 4 calls, 2 free, $2 → 4; part 3: 6 × $0.50 → 3.
		expect(described(invoice)).toEqual([
			["Base fee (1–10 Sep, Starter v1)", 1, 10],
			["Agent calls (1–10 Sep, Starter v1) — 6 units (first 2 included)", 6, 4],
			["Base fee (11–20 Sep, Starter v2)", 1, 20],
			["Agent calls (11–20 Sep, Starter v2) — 4 units (first 2 included)", 4, 4],
			["Base fee (21–30 Sep, Scale v1)", 1, 30],
			["Agent calls (21–30 Sep, Scale v1) — 6 units", 6, 3],
		]);
		expect(invoice.amount).toBe(71);
		expect(invoice.rate_plan_id).toBe(scale.id);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(described(upcoming.body)).toEqual(described(invoice));
		// Late usage of the second part: a supplementary invoice bills that part's difference only.
		await sendActions(calls(agent, 17, 1));
		const late = await generateOne(PERIOD, account.id);
		expect(late.kind).toBe("supplementary");
		expect(described(late)).toEqual([
			["Agent calls (11–20 Sep, Starter v2) — late usage: 1 unit (5 in total, first 2 included)", 1, 2],
		]);
	});

	it("splits a day at the instant of the change, by the events' timestamps", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1));
		const { plan, account, subscription, instances } = await customer(callsPlan("Day", 0, 1));
		const agent = instances[0] as string;
		await newVersion(plan.id, callsPlan("Day", 0, 2));
		const event = (time: string) => ({ agent_key: agent, action_type: "call", timestamp: at(10, time) });
		setClock(at(10, "12:00:00.000"));
		// Counted before the change: three before its instant, two timestamped a little after it.
		await sendActions([...Array(3).fill(event("11:00:00.000")), ...Array(2).fill(event("12:03:00.000"))]);
		await changeNow(subscription.id);
		// After the change: four after its instant, and one late, timestamped before it.
		await sendActions([...Array(4).fill(event("12:00:00.000")), event("11:59:59.999")]);
		setClock("2026-10-01T00:10:00.000Z");
		const invoice = await generateOne(PERIOD, account.id);
		expect(described(invoice)).toEqual([
			["Base fee (1–10 Sep, Day v1)", 1, 0],
			["Agent calls (1–10 Sep, Day v1) — 4 units", 4, 4],
			["Base fee (10–30 Sep, Day v2)", 1, 0],
			["Agent calls (10–30 Sep, Day v2) — 6 units", 6, 12],
		]);
		// Real-time usage shows the same split, each charge naming its part.
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}&billing_period=${PERIOD}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(
			usage.body.charges.map((c: Record<string, unknown>) => [c.description, c.quantity, c.amount]),
		).toEqual([
			["Base fee (1–10 Sep, Day v1)", 1, 0],
			["Agent calls (1–10 Sep, Day v1)", 4, 4],
			["Base fee (10–30 Sep, Day v2)", 1, 0],
			["Agent calls (10–30 Sep, Day v2)", 6, 12],
		]);
		expect(usage.body.total).toBe(16);
		expect(usage.body.usage).toEqual([{ kind: "action", type: "call", count: 10, value: null }]);
	});

	it("takes the later version's minimum on the whole period", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1));
		const { plan, account, subscription } = await customer({
			...callsPlan("Growth", 30, 1),
			minimum_amount: 1000,
		});
		await newVersion(plan.id, { ...callsPlan("Growth", 60, 1), minimum_amount: 100 });
		setClock(at(16));
		await changeNow(subscription.id);
		vi.useRealTimers();
		const invoice = await generateOne(PERIOD, account.id);
		expect(invoice.line_items.map((line) => [line.metric, line.amount])).toEqual([
			["base_fee", 15],
			["calls", 0],
			["base_fee", 30],
			["calls", 0],
			["minimum_commitment", 55],
		]);
		expect(invoice.amount).toBe(100);
	});
});
