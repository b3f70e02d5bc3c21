import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAgent, get, post } from "../../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generateOne,
	linesOf,
	MANUAL_COLLECTION,
	outboxEvents,
	sendActions,
	sendOutcome,
	shiftPeriod,
} from "../fixtures";

// One subscription, one month: a base fee, a per-unit charge with free units, a package charge and a
// percentage of outcome values, all metered through the events API.
const plan = {
	currency: "USD",
	base_fee: 49,
	charges: [
		{
			metric: "llm_tokens",
			description: "LLM tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "per_unit",
			unit_price: 0.00002,
			included_quantity: 100_000,
		},
		{
			metric: "tool_calls",
			source: { kind: "action", type: "tool_call", aggregate: "count" },
			model: "package",
			package_size: 10,
			package_price: 0.5,
		},
		{
			metric: "hires",
			description: "Successful hires",
			source: { kind: "outcome", type: "successful_hire", aggregate: "sum" },
			model: "percentage",
			percent: 10,
		},
	],
};

describe("scenario: a simple month", () => {
	it("bills the base fee and every charge on the month's usage", async () => {
		const { account, subscription, plan: ratePlan, instances } = await customer(plan, { instances: 2 });
		const [first, second] = instances as [string, string];
		// The first instance belongs to an agent, the second to none: revenue by agent splits lines by these shares.
		const agent = await createAgent();
		expect((await post(`/v1/agents/${agent.id}/instances`, { key: first })).status).toBe(200);
		await sendActions([
			{ agent_key: first, action_type: "llm_call", metadata: { tokens: 60_000 } },
			{ agent_key: second, action_type: "llm_call", metadata: { tokens: 50_000 } },
			{ agent_key: second, action_type: "llm_call", metadata: { tokens: 40_000 } },
			...actions(first, "tool_call", 23),
		]);
		await sendOutcome(first, "successful_hire", 1200.5);
		await sendOutcome(second, "successful_hire", 300);

		const period = currentPeriod();
		const invoice = await generateOne(period, account.id);

		// base fee 49.00
		// llm_tokens: 60,000 + 50,000 + 40,000 = 150,000; 100,000 free → 50,000 × 0.00002 = 1.00
		// tool_calls: 23 → ceil(23 / 10) = 3 packages × 0.50 = 1.50
		// hires: 1,200.5 + 300 = 1,500.5 × 10% = 150.05
		// total 49 + 1.00 + 1.50 + 150.05 = 201.55
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 49],
			["llm_tokens", 150_000, 1],
			["tool_calls", 23, 1.5],
			["hires", 1500.5, 150.05],
		]);
		expect(invoice.line_items.map((line) => line.description)).toEqual([
			"Base fee",
			"LLM tokens — 150,000 units (first 100,000 included)",
			"tool_calls — 23 units",
			"Successful hires — 1,500.5 units",
		]);
		expect(invoice).toEqual({
			id: expect.stringMatching(/^inv_[0-9a-z]{26}$/),
			number: expect.stringMatching(/^INV-\d{6}$/),
			account_id: account.id,
			payer_account_id: account.id,
			subscription_id: subscription.id,
			rate_plan_id: ratePlan.id,
			billing_period: period,
			period_start: `${period}-01T00:00:00.000Z`,
			period_end: `${shiftPeriod(period, 1)}-01T00:00:00.000Z`,
			kind: "regular",
			status: "open",
			currency: "USD",
			exchange_rate: null,
			line_items: expect.any(Array),
			amount: 201.55,
			issued_at: expect.any(String),
			paid_at: null,
			voided_at: null,
			created_at: invoice.issued_at,
			due_at: new Date(Date.parse(invoice.issued_at) + 30 * 86_400_000).toISOString(),
			bill_to: { name: "Acme", email: "billing@acme.test", billing_address: null },
			credits_applied: 0,
			amount_due: 201.55,
			amount_paid: 0,
			amount_remaining: 201.55,
			payments: [],
			amount_credited: 0,
			credit_notes: [],
			// A manual account's invoice: nobody asks Stripe for it (docs/payments.md).
			collection: MANUAL_COLLECTION,
		});
		expect((await get(`/v1/invoices/${invoice.id}`)).body).toEqual(invoice);

		const { results: shares } = await env.DB.prepare(
			"SELECT metric, agent_shares FROM invoice_lines WHERE invoice_id = ?1 ORDER BY position",
		)
			.bind(invoice.id)
			.all<{ metric: string; agent_shares: string | null }>();
		expect(shares.map((line) => [line.metric, line.agent_shares && JSON.parse(line.agent_shares)])).toEqual([
			["base_fee", null],
			[
				"llm_tokens",
				[
					{ agent_id: agent.id, quantity: "60000" },
					{ agent_id: null, quantity: "90000" },
				],
			],
			["tool_calls", [{ agent_id: agent.id, quantity: "23" }]],
			[
				"hires",
				[
					{ agent_id: agent.id, quantity: "1200.5" },
					{ agent_id: null, quantity: "300" },
				],
			],
		]);

		const [created] = await outboxEvents("invoice.created", invoice.id);
		expect(created?.data).toEqual({
			invoice_id: invoice.id,
			account_id: account.id,
			subscription_id: subscription.id,
			billing_period: period,
			amount: 201.55,
			currency: "USD",
			status: "open",
			collection: MANUAL_COLLECTION,
		});
	});
});
