import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { actions, currentPeriod, customer, type Invoice, sendActions } from "./fixtures";

// Concurrent generations are settled by constraints: every invoice exists once, and numbers are taken inside
// the batch that stores the invoice, so a generator that loses a race leaves no gap.
const plan = {
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 2,
		},
	],
};

async function generateConcurrently(calls: number): Promise<{ statuses: number[]; created: Invoice[] }> {
	const responses = await Promise.all(
		Array.from({ length: calls }, () => post("/v1/invoices/generate", { billing_period: currentPeriod() })),
	);
	for (const response of responses)
		expect([200, 201], JSON.stringify(response.body)).toContain(response.status);
	return {
		statuses: responses.map((response) => response.status),
		created: responses.flatMap((response) => response.body.invoices as Invoice[]),
	};
}

async function storedNumbers(): Promise<number[]> {
	const { results } = await env.DB.prepare(
		"SELECT number FROM invoices WHERE environment = 'live' ORDER BY number",
	).all<{ number: number }>();
	return results.map((row) => row.number);
}

describe("concurrent generation", () => {
	it("creates each invoice once, with gapless numbers, however many generate calls race", async () => {
		const customers = await Promise.all(Array.from({ length: 4 }, () => customer(plan)));
		await sendActions(customers.flatMap((c, i) => actions(c.instances[0] as string, "call", i + 1)));

		const { statuses, created } = await generateConcurrently(6);
		expect(statuses).toContain(201);
		// one regular invoice per subscription in all responses together; calls i + 1 → amount 2 × (i + 1)
		expect(created.map((invoice) => invoice.subscription_id).sort()).toEqual(
			customers.map((c) => c.subscription.id).sort(),
		);
		for (const [i, c] of customers.entries()) {
			expect(created.find((invoice) => invoice.subscription_id === c.subscription.id)?.amount).toBe(
				2 * (i + 1),
			);
		}
		const numbers = created.map((invoice) => Number(invoice.number.slice(4))).sort((a, b) => a - b);
		expect(numbers).toEqual([1, 2, 3, 4]);
		expect(await storedNumbers()).toEqual([1, 2, 3, 4]);
		const events = await env.DB.prepare(
			"SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.created'",
		).first<{ n: number }>();
		expect(events?.n).toBe(4);

		// Late usage for two subscriptions, then another race: one supplementary invoice each, numbers 5 and 6.
		await sendActions([
			...actions(customers[0]?.instances[0] as string, "call", 10),
			...actions(customers[3]?.instances[0] as string, "call", 1),
		]);
		const late = await generateConcurrently(5);
		expect(
			late.created.map((invoice) => [invoice.subscription_id, invoice.kind, invoice.amount]).sort(),
		).toEqual(
			[
				// 10 more calls × 2 = 20; 1 more call × 2 = 2
				[customers[0]?.subscription.id, "supplementary", 20],
				[customers[3]?.subscription.id, "supplementary", 2],
			].sort(),
		);
		expect(await storedNumbers()).toEqual([1, 2, 3, 4, 5, 6]);
		expect((await generateConcurrently(3)).created).toEqual([]);
	});
});
