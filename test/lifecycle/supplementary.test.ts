/**
 * Supplementary invoices (CONTRACT §10, §19): made only when some amount differs, and worded for what they are —
 * usage since the previous invoice when the period was still open at its first invoice, late usage when it had
 * ended.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	invoicesOf,
	linesOf,
	sendActions,
} from "../invoicing/fixtures";
import { backdateSubscription, inPreviousMonth, monthStart, previousPeriod } from "./fixtures";

const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			description: "Calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.5,
			included_quantity: 10,
		},
	],
};

async function invoiceCreatedCount(accountId: string): Promise<number> {
	const row = await env.DB.prepare(
		"SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.created' AND json_extract(data, '$.account_id') = ?1",
	)
		.bind(accountId)
		.first<{ n: number }>();
	return row?.n ?? 0;
}

describe("supplementary invoices", () => {
	it("are not made when more usage changes no amount (inside included units)", async () => {
		const { account, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "llm_call", 3));
		const regular = await generateOne(currentPeriod(), account.id);
		expect(linesOf(regular)).toEqual([
			["base_fee", 1, 10],
			["calls", 3, 0],
		]);
		// 3 → 8 calls: still inside the 10 included, every amount is the same.
		await sendActions(actions(instances[0] as string, "llm_call", 5));
		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });
		expect(await invoicesOf(account.id)).toHaveLength(1);
		expect(await invoiceCreatedCount(account.id)).toBe(1);

		// 8 → 13 calls: 3 past the included 10 → 1.50. The line states everything added since the invoice.
		await sendActions(actions(instances[0] as string, "llm_call", 5));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(linesOf(supplementary)).toEqual([["calls", 10, 1.5]]);
		expect(supplementary.amount).toBe(1.5);
		expect(await invoiceCreatedCount(account.id)).toBe(2);
	});

	it("of a period invoiced while open describe their lines as usage since the previous invoice", async () => {
		const { account, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "llm_call", 12));
		await generateOne(currentPeriod(), account.id);
		await sendActions(actions(instances[0] as string, "llm_call", 4));
		const supplementary = await generateOne(currentPeriod(), account.id);
		// 16 calls − 10 included = 6 × 0.50 = 3.00; 1.00 billed before → 2.00
		expect(linesOf(supplementary)).toEqual([["calls", 4, 2]]);
		expect(supplementary.line_items[0]?.description).toBe(
			"Calls — usage since the previous invoice: 4 units (16 in total, first 10 included)",
		);
	});

	it("of a period invoiced after it ended describe their lines as late usage", async () => {
		const { account, subscription, instances } = await customer(plan);
		await backdateSubscription(subscription.id, monthStart(-1).toISOString());
		const key = instances[0] as string;
		await sendActions(actions(key, "llm_call", 11).map((a) => ({ ...a, timestamp: inPreviousMonth() })));
		const regular = await generateOne(previousPeriod(), account.id);
		expect(linesOf(regular)).toEqual([
			["base_fee", 1, 10],
			["calls", 11, 0.5],
		]);
		await sendActions(actions(key, "llm_call", 2).map((a) => ({ ...a, timestamp: inPreviousMonth() })));
		const late = await generateOne(previousPeriod(), account.id);
		expect(late).toMatchObject({ kind: "supplementary", billing_period: previousPeriod(), amount: 1 });
		expect(late.line_items[0]?.description).toBe(
			"Calls — late usage: 2 units (13 in total, first 10 included)",
		);
	});
});
