/**
 * Alert thresholds on the total, budgets and reservation amounts, and invoicing_threshold count in the
 * subscription's billing currency (docs/currencies.md): the head accumulator converts the plan-currency amounts
 * at the rate in effect now, line by line as GET /v1/usage does.
 */
import { describe, expect, it, vi } from "vitest";
import { triggeredEvents } from "../alerts/fixtures";
import { expectError, get, post } from "../helpers";
import { actions, currentPeriod, generate, sdkKey, sendActions } from "../invoicing/fixtures";
import { subscriptionAccumulator } from "../subscriptions/fixtures";
import { thresholdInvoices } from "../thresholds/fixtures";
import { addRate, foreignCustomer } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const yesterday = () => new Date(Date.now() - DAY).toISOString();

async function alert(subscriptionId: string, threshold: number, block = false) {
	const response = await post("/v1/alerts", { subscription_id: subscriptionId, threshold, block });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string };
}

const entitlement = async (agentKey: string) =>
	(await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await sdkKey() })).body;

describe("alerts on the total amount, in the billing currency", () => {
	it("compares the period's amount converted at the rate in effect now", async () => {
		await addRate("USD", "CAD", 2, yesterday());
		const { subscription, instance } = await foreignCustomer("USD", "CAD");
		// Base fee 10 USD = 20 CAD; 1,000 tokens = 1.30 USD = 2.60 CAD; 22.60 CAD in all (11.30 USD).
		const reached = await alert(subscription.id, 21);
		const above = await alert(subscription.id, 23);
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		await subscriptionAccumulator(subscription.id).flush();
		const [event] = await triggeredEvents(reached.id);
		expect(event).toMatchObject({ metric: null, threshold: 21, value: 22.6 });
		expect((await get(`/v1/alerts/${reached.id}`)).body.status).toBe("triggered");
		expect(await triggeredEvents(above.id)).toEqual([]);
		expect((await get(`/v1/alerts/${above.id}`)).body.status).toBe("armed");
	});
});

describe("reservations against budgets in the billing currency", () => {
	it("holds in the billing currency, spent converted", async () => {
		await addRate("USD", "AUD", 2, yesterday());
		const { subscription, instance } = await foreignCustomer("USD", "AUD");
		const budget = await alert(subscription.id, 25, true);
		// Spent: the base fee, 10 USD = 20 AUD.
		const held = await post("/v1/reservations", { agent_key: instance, amount: 4 });
		expect(held.status, JSON.stringify(held.body)).toBe(201);
		expect(held.body).toMatchObject({ amount: 4, currency: "AUD", status: "held" });
		const refused = await post("/v1/reservations", { agent_key: instance, amount: 1.5 });
		const error = expectError(refused, 409, "budget_exceeded");
		expect(error.details).toEqual([
			{ alert_id: budget.id, threshold: 25, spent: 20, held: 4, requested: 1.5 },
		]);
		expect((await entitlement(instance)).budget).toEqual({
			alert_id: budget.id,
			threshold: 25,
			spent: 20,
			held: 4,
			available: 1,
		});
	});

	it("answers 409 naming the pair while no rate is in effect, and converts once one is", async () => {
		const { subscription, instance } = await foreignCustomer("USD", "NZD");
		await alert(subscription.id, 30, true);
		const refused = await post("/v1/reservations", { agent_key: instance, amount: 1 });
		expect(expectError(refused, 409, "conflict").message).toContain("no USD→NZD exchange rate in effect");
		expect((await entitlement(instance)).budget).toBeNull();
		// A rate added now is told to the accumulator: no wait for its next refresh.
		await addRate("NZD", "USD", 0.5);
		await vi.waitFor(
			async () => {
				const budget = (await entitlement(instance)).budget;
				if (budget === null) throw new Error("no budget yet");
				expect(budget).toMatchObject({ threshold: 30, spent: 20, held: 0, available: 10 });
			},
			{ timeout: 5_000, interval: 200 },
		);
		const held = await post("/v1/reservations", { agent_key: instance, amount: 10 });
		expect(held.status, JSON.stringify(held.body)).toBe(201);
		expect(held.body.currency).toBe("NZD");
	});
});

describe("invoicing_threshold in the billing currency", () => {
	const calls = {
		base_fee: 0,
		charges: [
			{
				metric: "calls",
				source: { kind: "action", type: "call", aggregate: "count" },
				model: "per_unit",
				unit_price: 1,
			},
		],
	};

	it("is judged on the converted usage; threshold invoices convert the difference of the originals", async () => {
		const rate = await addRate("USD", "SGD", 2, yesterday());
		const { subscription, instance, account } = await foreignCustomer("USD", "SGD", calls, {
			invoicing_threshold: 10,
		});
		// 6 calls = 6 USD = 12 SGD: over 10 SGD (not over 10 USD).
		await sendActions(actions(instance, "call", 6));
		const [first] = await thresholdInvoices(subscription.id, 1);
		const read = (await get(`/v1/invoices/${first?.id}`)).body;
		expect(read).toMatchObject({ kind: "threshold", currency: "SGD", amount: 12 });
		expect(read.exchange_rate).toEqual({
			base: "USD",
			quote: "SGD",
			rate: 2,
			effective_at: rate.effective_at,
		});
		expect(read.line_items).toEqual([
			expect.objectContaining({
				metric: "calls",
				quantity: 6,
				amount: 12,
				original_amount: 6,
				original_currency: "USD",
			}),
		]);
		// 4 more: 4 USD = 8 SGD not invoiced yet, under the threshold.
		await sendActions(actions(instance, "call", 4));
		await subscriptionAccumulator(subscription.id).flush();
		await new Promise((resolve) => setTimeout(resolve, 1500));
		expect((await thresholdInvoices(subscription.id, 1)).length).toBe(1);
		// 1 more: 5 USD = 10 SGD.
		await sendActions(actions(instance, "call", 1));
		const second = (await thresholdInvoices(subscription.id, 2))[1];
		expect(second).toMatchObject({ amount: 10 });
		expect(second?.line_items[0]).toMatchObject({ quantity: 5, amount: 10, original_amount: 5 });
		// The regular invoice bills none of that usage again.
		const [regular] = (await generate(currentPeriod(), account.id)).invoices;
		expect(regular).toMatchObject({ kind: "regular", currency: "SGD", amount: 0 });
		expect(regular?.line_items.find((line) => line.metric === "calls")).toMatchObject({
			amount: 0,
			original_amount: 0,
			original_currency: "USD",
		});
	});
});
