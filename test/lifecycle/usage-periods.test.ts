/**
 * GET /v1/usage answers one billing period (CONTRACT §6): billing_period, else the month of start_date, else
 * the current month; the dates only filter the usage lines; never one month's lines next to another's charges.
 */
import { describe, expect, it } from "vitest";
import { expectError, get } from "../helpers";
import { sendAction, subscribe, subscriptionAccumulator, uniqueKey } from "../subscriptions/fixtures";
import { backdateSubscription, currentPeriod, inPreviousMonth, monthStart, previousPeriod } from "./fixtures";

const lastDayOfPrevious = () => new Date(monthStart(0).getTime() - 1).toISOString().slice(0, 10);

/** A subscription that started at the beginning of last month, with usage in both months. */
async function subscriptionWithTwoMonths() {
	const { subscription, keys } = await subscribe([uniqueKey()]);
	await backdateSubscription(subscription.id, monthStart(-1).toISOString());
	const key = keys[0] as string;
	// Last month: 3 calls, 5,000 tokens. This month: 4 calls, 200 tokens.
	for (const tokens of [1000, 1500, 2500]) {
		await sendAction({ agent_key: key, timestamp: inPreviousMonth(), metadata: { tokens } });
	}
	for (const tokens of [50, 50, 50, 50]) await sendAction({ agent_key: key, metadata: { tokens } });
	return { subscription, key };
}

describe("GET /v1/usage: one billing period per answer", () => {
	it("last month's dates answer last month's lines and last month's charges", async () => {
		const { subscription } = await subscriptionWithTwoMonths();
		const start = `${previousPeriod()}-01`;
		const response = await get(
			`/v1/usage?subscription_id=${subscription.id}&start_date=${start}&end_date=${lastDayOfPrevious()}`,
		);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		// tokens 5,000 × $0.001 = $5; calls 3 − 2 included = 1 × $0.01; base fee $10 → $15.01.
		expect(response.body).toMatchObject({
			billing_period: previousPeriod(),
			start_date: start,
			end_date: lastDayOfPrevious(),
			usage: [{ kind: "action", type: "llm_call", count: 3, value: null }],
			total: 15.01,
		});
		expect(
			response.body.charges.map((c: { metric: string; amount: number }) => [c.metric, c.amount]),
		).toEqual([
			["base_fee", 10],
			["tokens", 5],
			["calls", 0.01],
			["hires", 0],
		]);
	});

	it("billing_period alone answers that whole month; its dates default to the month's bounds", async () => {
		const { subscription } = await subscriptionWithTwoMonths();
		const response = await get(
			`/v1/usage?subscription_id=${subscription.id}&billing_period=${previousPeriod()}`,
		);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toMatchObject({
			billing_period: previousPeriod(),
			start_date: `${previousPeriod()}-01`,
			end_date: lastDayOfPrevious(),
			usage: [{ count: 3 }],
			total: 15.01,
		});
	});

	it("start_date alone picks its month and ends the lines at that month's end", async () => {
		const { subscription } = await subscriptionWithTwoMonths();
		const response = await get(
			`/v1/usage?subscription_id=${subscription.id}&start_date=${previousPeriod()}-01`,
		);
		expect(response.body).toMatchObject({
			billing_period: previousPeriod(),
			end_date: lastDayOfPrevious(),
			usage: [{ count: 3 }],
			total: 15.01,
		});
	});

	it("without dates answers the current month only", async () => {
		const { subscription } = await subscriptionWithTwoMonths();
		const response = await get(`/v1/usage?subscription_id=${subscription.id}`);
		// tokens 200 × $0.001 = $0.20; calls 4 − 2 = 2 × $0.01 = $0.02; base fee $10 → $10.22.
		expect(response.body).toMatchObject({
			billing_period: currentPeriod(),
			start_date: `${currentPeriod()}-01`,
			usage: [{ count: 4 }],
			total: 10.22,
		});
	});

	it("the dates only filter the lines: a part of the month still shows the whole month's charges", async () => {
		const { subscription } = await subscriptionWithTwoMonths();
		const today = new Date().toISOString().slice(0, 10);
		const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
		if (yesterday.slice(0, 7) !== currentPeriod()) return; // the 1st: no earlier day of this month to ask
		const response = await get(
			`/v1/usage?subscription_id=${subscription.id}&start_date=${currentPeriod()}-01&end_date=${yesterday}`,
		);
		expect(response.body).toMatchObject({ billing_period: currentPeriod(), usage: [], total: 10.22 });
		expect(today.slice(0, 7)).toBe(currentPeriod());
	});

	it("a period before the subscription existed has no charges", async () => {
		const { subscription, keys } = await subscribe([uniqueKey()]);
		await sendAction({ agent_key: keys[0], timestamp: inPreviousMonth() });
		const response = await get(
			`/v1/usage?subscription_id=${subscription.id}&billing_period=${previousPeriod()}`,
		);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toMatchObject({ billing_period: previousPeriod(), charges: [], total: 0 });
		// The event reached the subscription with a timestamp before its start: not its usage (§19), but the
		// instance's, listed as unbilled.
		expect(response.body.usage).toEqual([]);
		await subscriptionAccumulator(subscription.id).flush();
		const unbilled = await get(`/v1/usage/unbilled?billing_period=${previousPeriod()}`);
		expect(unbilled.body.usage.filter((line: { agent_key: string }) => line.agent_key === keys[0])).toEqual([
			{ agent_key: keys[0], kind: "action", type: "llm_call", count: 1, value: null },
		]);
	});

	it("by agent_key, dates default to the period asked for", async () => {
		const key = uniqueKey();
		await sendAction({ agent_key: key, timestamp: inPreviousMonth() });
		await sendAction({ agent_key: key });
		const lastMonth = await get(`/v1/usage?agent_key=${key}&billing_period=${previousPeriod()}`);
		expect(lastMonth.body).toMatchObject({
			start_date: `${previousPeriod()}-01`,
			end_date: lastDayOfPrevious(),
			usage: [{ count: 1 }],
		});
		const fromStart = await get(`/v1/usage?agent_key=${key}&start_date=${previousPeriod()}-01`);
		expect(fromStart.body).toMatchObject({ end_date: lastDayOfPrevious(), usage: [{ count: 1 }] });
	});

	it.each([
		[
			"dates outside billing_period",
			(p: string) => `billing_period=${p}&start_date=2020-01-01`,
			"start_date",
		],
		[
			"an end_date in another month than start_date",
			() => `start_date=${previousPeriod()}-01&end_date=${currentPeriod()}-01`,
			"end_date",
		],
		["a malformed billing_period", () => "billing_period=2026-13", "billing_period"],
		[
			"a billing_period in the future",
			() => `billing_period=${monthStart(1).toISOString().slice(0, 7)}`,
			"billing_period",
		],
	])("with subscription_id answers 400 for %s", async (_, query, path) => {
		const { subscription } = await subscribe();
		const error = expectError(
			await get(`/v1/usage?subscription_id=${subscription.id}&${query(currentPeriod())}`),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
	});
});
