/**
 * Black-box checks of a plan change `at: "now"`, written from the contract's text of plan changes: the period
 * splits at the change's instant, each part billed as a subscription active only then (its own charges, tiers
 * and included quantities from zero, its base fee prorated by its seconds), both parts on the one regular invoice.
 * The clock is set so that the parts are known: September 2026 has 30 days, and its half is the 16th at 00:00.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";
import {
	actions,
	generate,
	generateOne,
	type Invoice,
	instanceKey,
	outboxEvents,
	sendActions,
	subscribe,
} from "../invoicing/fixtures";
import {
	clockAt,
	namedPlan,
	newVersion,
	outbox,
	perCall,
	subscription,
	tieredCalls,
} from "./plan-billing-fixtures";
import { awaitThresholdInvoices } from "./threshold-fixtures";

afterEach(() => {
	vi.useRealTimers();
});

const START = "2026-09-01T00:00:00.000Z";
const HALF = "2026-09-16T00:00:00.000Z";
const AFTER = "2026-10-01T00:05:00.000Z";

/** An account subscribed from the first instant of September 2026 to `planId`, with one instance. */
async function septemberCustomer(planId: string, accountFields: Record<string, unknown> = {}) {
	clockAt(START);
	const account = await createAccount(undefined, accountFields);
	const key = instanceKey();
	const sub = await subscribe(account.id, planId, [key]);
	expect(sub.started_at).toBe(START);
	return { account, key, sub };
}

async function changeNow(subscriptionId: string, body: Record<string, unknown>) {
	const response = await post(`/v1/subscriptions/${subscriptionId}/change-plan`, { ...body, at: "now" });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

/** Starter ($20 unless told) moved at `at` to Growth ($50 unless told), from the first instant of September. */
async function splitAt(
	at: string,
	starterFields: Record<string, unknown>,
	growthFields: Record<string, unknown>,
) {
	const starter = await namedPlan("Starter", { base_fee: 20, charges: [], ...starterFields });
	const growth = await namedPlan("Growth", { base_fee: 50, charges: [], ...growthFields });
	const customer = await septemberCustomer(starter.id);
	clockAt(at);
	await changeNow(customer.sub.id, { rate_plan_id: growth.id });
	return { starter, growth, ...customer };
}

/** September's regular invoice, made by generation after the month ended. */
async function septemberInvoice(accountId: string) {
	clockAt(AFTER);
	return generateOne("2026-09", accountId);
}

const baseLines = (invoice: Pick<Invoice, "line_items">) =>
	invoice.line_items.filter((line) => line.metric === "base_fee");
const metricLines = (invoice: Pick<Invoice, "line_items">, metric: string) =>
	invoice.line_items.filter((line) => line.metric === metric).map((line) => [line.quantity, line.amount]);

describe("change-plan at: now", () => {
	it("bills the worked example: $20 moved halfway through a 30-day month to $50 makes 10 + 25 = 35", async () => {
		const starter = await namedPlan("Starter", { base_fee: 20, charges: [] });
		const growth = await namedPlan("Growth", { base_fee: 50, charges: [] });
		const { account, sub } = await septemberCustomer(starter.id);
		clockAt(HALF);
		const changed = await changeNow(sub.id, { rate_plan_id: growth.id });
		expect(changed).toMatchObject({
			id: sub.id,
			rate_plan_id: growth.id,
			rate_plan_version: 1,
			pending_plan_change: null,
			pending_rate_plan_id: null,
			status: "active",
			started_at: START,
		});
		expect(await subscription(sub.id)).toEqual(changed);
		const events = await outbox("subscription.updated", (d) => d.subscription_id === sub.id);
		expect(events).toHaveLength(1);
		expect(events[0]?.data).toMatchObject({ rate_plan_id: growth.id, pending_rate_plan_id: null });

		clockAt(AFTER);
		const invoice = await generateOne("2026-09", account.id);
		expect(invoice).toMatchObject({ kind: "regular", rate_plan_id: growth.id, amount: 35 });
		const fees = baseLines(invoice);
		expect(fees.map((line) => line.amount)).toEqual([10, 25]);
		expect(fees[0]?.description).toContain("Starter");
		expect(fees[1]?.description).toContain("Growth");
		expect(fees[0]?.description).not.toEqual(fees[1]?.description);
		expect(await outboxEvents("invoice.created", invoice.id)).toHaveLength(1);
		expect((await generate("2026-09", account.id)).invoices).toEqual([]);
	});

	it("bills the worked example between versions of one plan, naming each part's version", async () => {
		const plan = await namedPlan("Growth", { base_fee: 20, charges: [] });
		const { account, sub } = await septemberCustomer(plan.id);
		await newVersion(plan.id, { name: "Growth", base_fee: 50, charges: [] });
		clockAt(HALF);
		const changed = await changeNow(sub.id, { version: 2 });
		expect(changed).toMatchObject({ rate_plan_id: plan.id, rate_plan_version: 2, pending_plan_change: null });
		clockAt(AFTER);
		const invoice = await generateOne("2026-09", account.id);
		expect(invoice.amount).toBe(35);
		const fees = baseLines(invoice);
		expect(fees.map((line) => line.amount)).toEqual([10, 25]);
		expect(fees[0]?.description).toMatch(/v1/);
		expect(fees[1]?.description).toMatch(/v2/);
	});

	it("prorates each part's base fee by its seconds, whatever prorate says, to the cent", async () => {
		for (const prorate of [true, false]) {
			// 9.25 of 30 days, then 20.75: 20 × 9.25 / 30 = 6.1666… → 6.17; 50 × 20.75 / 30 = 34.5833… → 34.58.
			const { account } = await splitAt("2026-09-10T06:00:00.000Z", { prorate }, { prorate });
			const invoice = await septemberInvoice(account.id);
			expect(baseLines(invoice).map((line) => line.amount)).toEqual([6.17, 34.58]);
			expect(invoice.amount).toBe(40.75);
		}
	});

	it("keeps a part's base-fee line when its prorated amount rounds to 0", async () => {
		const { account } = await splitAt("2026-09-01T00:00:01.000Z", {}, {});
		const invoice = await septemberInvoice(account.id);
		// 20 × 1 s / 2,592,000 s → 0.00; 50 × 2,591,999 / 2,592,000 = 49.99998… → 50.00.
		expect(baseLines(invoice).map((line) => line.amount)).toEqual([0, 50]);
		expect(invoice.amount).toBe(50);
	});

	it("rates each part's usage on its own: tiers and included quantities start again at the split", async () => {
		const tasks = (price: number) => ({
			metric: "tasks",
			source: { kind: "action", type: "task", aggregate: "count" },
			model: "per_unit",
			unit_price: price,
			included_quantity: 5,
		});
		const starter = await namedPlan("Starter", { base_fee: 0, charges: [tieredCalls(10, 1, 0.5), tasks(1)] });
		const growth = await namedPlan("Growth", { base_fee: 0, charges: [tieredCalls(10, 2, 1), tasks(3)] });
		const { account, key, sub } = await septemberCustomer(starter.id);
		clockAt("2026-09-05T00:00:00.000Z");
		await sendActions([...actions(key, "call", 15), ...actions(key, "task", 8)]);
		clockAt(HALF);
		await changeNow(sub.id, { rate_plan_id: growth.id });
		clockAt("2026-09-20T00:00:00.000Z");
		await sendActions([...actions(key, "call", 15), ...actions(key, "task", 8)]);
		clockAt(AFTER);
		const invoice = await generateOne("2026-09", account.id);
		// Starter: 10 × 1 + 5 × 0.5 = 12.5 and (8 − 5) × 1 = 3; Growth: 10 × 2 + 5 × 1 = 25 and (8 − 5) × 3 = 9.
		expect(metricLines(invoice, "calls")).toEqual([
			[15, 12.5],
			[15, 25],
		]);
		expect(metricLines(invoice, "tasks").map(([, amount]) => amount)).toEqual([3, 9]);
		expect(invoice.amount).toBe(49.5);
		const usageLines = invoice.line_items.filter((line) => line.metric === "calls");
		expect(usageLines[0]?.description).not.toEqual(usageLines[1]?.description);
	});

	it("takes the later version's minimum", async () => {
		const { account } = await splitAt(HALF, { minimum_amount: 100 }, { minimum_amount: 40 });
		const invoice = await septemberInvoice(account.id);
		// 10 + 25 = 35, below Growth's minimum of 40 (not Starter's 100): a top-up of 5.
		expect(invoice.line_items.find((line) => line.metric === "minimum_commitment")?.amount).toBe(5);
		expect(invoice.amount).toBe(40);
	});

	it("bills late usage of each part by that part's prices on a supplementary invoice", async () => {
		const { account, key, growth } = await splitAt(
			HALF,
			{ base_fee: 0, charges: [perCall(1)] },
			{ base_fee: 0, charges: [perCall(2)] },
		);
		expect((await septemberInvoice(account.id)).amount).toBe(0);
		await sendActions([
			{ agent_key: key, action_type: "call", timestamp: "2026-09-05T00:00:00.000Z" },
			{ agent_key: key, action_type: "call", timestamp: "2026-09-20T00:00:00.000Z" },
		]);
		const late = await generateOne("2026-09", account.id);
		expect(late).toMatchObject({ kind: "supplementary", rate_plan_id: growth.id, amount: 3 });
		expect(metricLines(late, "calls")).toEqual([
			[1, 1],
			[1, 2],
		]);
	});

	it("bills threshold invoices per part, each part rated by its own prices", async () => {
		const starter = await namedPlan("Starter", { base_fee: 20, charges: [perCall(1)] });
		const growth = await namedPlan("Growth", { base_fee: 50, charges: [perCall(2)] });
		const { account, key, sub } = await septemberCustomer(starter.id);
		expect((await patch(`/v1/subscriptions/${sub.id}`, { invoicing_threshold: 10 })).status).toBe(200);
		clockAt("2026-09-05T00:00:00.000Z");
		await sendActions(actions(key, "call", 6));
		clockAt(HALF);
		await changeNow(sub.id, { rate_plan_id: growth.id });
		clockAt("2026-09-20T00:00:00.000Z");
		// 6 × 1 in the first part and 2 × 2 in the second: 10 not yet invoiced reaches the threshold.
		await sendActions(actions(key, "call", 2));
		const [threshold] = await awaitThresholdInvoices(sub.id, 1);
		expect(metricLines(threshold as Invoice, "calls")).toEqual([
			[6, 6],
			[2, 4],
		]);
		expect(threshold?.amount).toBe(10);
		clockAt(AFTER);
		const regular = await generateOne("2026-09", account.id);
		expect(metricLines(regular, "calls").map(([, amount]) => amount)).toEqual([0, 0]);
		expect(regular.amount).toBe(35);
	});

	it("shows the split in the upcoming invoice and real-time usage of the open period", async () => {
		const starter = await namedPlan("Starter", { base_fee: 20, charges: [perCall(1)] });
		const growth = await namedPlan("Growth", { base_fee: 50, charges: [perCall(2)] });
		const { key, sub } = await septemberCustomer(starter.id);
		clockAt("2026-09-05T00:00:00.000Z");
		await sendActions(actions(key, "call", 3));
		clockAt(HALF);
		await changeNow(sub.id, { rate_plan_id: growth.id });
		await sendActions(actions(key, "call", 4));
		clockAt("2026-09-20T00:00:00.000Z");
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(upcoming.body).toMatchObject({ id: null, number: null, rate_plan_id: growth.id });
		expect(baseLines(upcoming.body).map((line) => line.amount)).toEqual([10, 25]);
		expect(metricLines(upcoming.body, "calls")).toEqual([
			[3, 3],
			[4, 8],
		]);
		expect(upcoming.body.amount).toBe(46);
		const usage = await get(`/v1/usage?subscription_id=${sub.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		expect(usage.body.total).toBe(46);
	});

	it("clears a pending change", async () => {
		const starter = await namedPlan("Starter", { base_fee: 20, charges: [] });
		const growth = await namedPlan("Growth", { base_fee: 50, charges: [] });
		const pro = await namedPlan("Pro", { base_fee: 80, charges: [] });
		const { sub } = await septemberCustomer(starter.id);
		const pending = await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: growth.id });
		expect(pending.body.pending_rate_plan_id).toBe(growth.id);
		clockAt(HALF);
		const changed = await changeNow(sub.id, { rate_plan_id: pro.id });
		expect(changed).toMatchObject({
			rate_plan_id: pro.id,
			pending_plan_change: null,
			pending_rate_plan_id: null,
		});
		clockAt("2026-10-02T00:00:00.000Z");
		expect(await subscription(sub.id)).toMatchObject({ rate_plan_id: pro.id, pending_plan_change: null });
	});

	it("answers 409 when the period already has a regular invoice, a draft too, with nothing changed", async () => {
		for (const grace of [0, 3]) {
			const starter = await namedPlan("Starter", { base_fee: 20, charges: [] });
			const growth = await namedPlan("Growth", { base_fee: 50, charges: [] });
			const { account, sub } = await septemberCustomer(starter.id, { invoice_grace_days: grace });
			clockAt("2026-09-10T00:00:00.000Z");
			const invoice = await generateOne("2026-09", account.id);
			expect(invoice.status).toBe(grace === 0 ? "open" : "draft");
			const before = await subscription(sub.id);
			expectError(
				await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: growth.id, at: "now" }),
				409,
				"conflict",
			);
			expect(await subscription(sub.id)).toEqual(before);
			// At the period's end the change is still possible.
			const later = await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: growth.id });
			expect(later.status, JSON.stringify(later.body)).toBe(200);
		}
	});

	it("refuses a cancelled subscription and the plan it already has, and read-only keys", async () => {
		const starter = await namedPlan("Starter", { base_fee: 20, charges: [] });
		const growth = await namedPlan("Growth", { base_fee: 50, charges: [] });
		const { sub } = await septemberCustomer(starter.id);
		const url = `/v1/subscriptions/${sub.id}/change-plan`;
		expectError(await post(url, { rate_plan_id: starter.id, at: "now" }), 409, "conflict");
		const readOnly = await createKey("read-only");
		expectError(await post(url, { rate_plan_id: growth.id, at: "now" }, { key: readOnly }), 403, "forbidden");
		expect((await post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
		expectError(await post(url, { rate_plan_id: growth.id, at: "now" }), 409, "conflict");
		expect((await subscription(sub.id)).rate_plan_id).toBe(starter.id);
	});
});
