/** GET /v1/invoices/upcoming (CONTRACT §19): the invoice the current period would produce if it closed now. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generateOne,
	invoicesOf,
	sendActions,
} from "../invoicing/fixtures";
import { monthStart } from "./fixtures";

const plan = {
	base_fee: 30,
	prorate: true,
	charges: [
		{
			metric: "calls",
			description: "Calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "tiered",
			tiers: [
				{ up_to: 5, unit_price: 1 },
				{ up_to: null, unit_price: 0.5 },
			],
		},
	],
};

/**
 * What an invoice says, without what only storing gives it (id, number, the instant it was issued, and the due
 * date, which follows from that instant: checked on its own).
 */
function content(invoice: Record<string, unknown>) {
	const {
		id: _id,
		number: _number,
		issued_at: issuedAt,
		due_at: dueAt,
		created_at: _created,
		...rest
	} = invoice;
	// The account's default net terms: 30 days after issue.
	expect(Date.parse(dueAt as string) - Date.parse(issuedAt as string)).toBe(30 * 86_400_000);
	return rest;
}

async function storedInvoiceCount(accountId: string) {
	const row = await env.DB.prepare(
		"SELECT (SELECT count(*) FROM invoices WHERE account_id = ?1) AS invoices, (SELECT count(*) FROM webhook_events WHERE event = 'invoice.created' AND json_extract(data, '$.account_id') = ?1) AS events",
	)
		.bind(accountId)
		.first<{ invoices: number; events: number }>();
	return row;
}

describe("GET /v1/invoices/upcoming", () => {
	it("is the invoice generated a moment later, prorated base fee included, and stores nothing", async () => {
		const { account, subscription, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "llm_call", 7));
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(upcoming.body).toMatchObject({
			id: null,
			number: null,
			kind: "regular",
			status: "open",
			billing_period: currentPeriod(),
			subscription_id: subscription.id,
		});
		// 7 calls: 5 × 1 + 2 × 0.5 = 6.00; the base fee is prorated from the moment the subscription started.
		expect(upcoming.body.line_items[1]).toMatchObject({ metric: "calls", quantity: 7, amount: 6 });
		const started = monthStart(0).getTime() < Date.now() - 1000;
		if (started)
			expect(upcoming.body.line_items[0].description).toMatch(/^Base fee \(prorated \d+ of \d+ days\)$/);
		expect(await storedInvoiceCount(account.id)).toEqual({ invoices: 0, events: 0 });

		const generated = await generateOne(currentPeriod(), account.id);
		expect(content(upcoming.body)).toEqual(content(generated as unknown as Record<string, unknown>));
	});

	it("after an invoice, is the supplementary invoice that generating would make", async () => {
		const { account, subscription, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "llm_call", 4));
		await generateOne(currentPeriod(), account.id);
		await sendActions(actions(instances[0] as string, "llm_call", 3));
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		// 4 → 7 calls: 6.00 − 4.00 = 2.00
		expect(upcoming.body).toMatchObject({ kind: "supplementary", amount: 2 });
		const generated = await generateOne(currentPeriod(), account.id);
		expect(content(upcoming.body)).toEqual(content(generated as unknown as Record<string, unknown>));
		// Nothing left: an empty supplementary invoice of 0.
		const empty = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		expect(empty.body).toMatchObject({ kind: "supplementary", amount: 0, line_items: [] });
		expect(await invoicesOf(account.id)).toHaveLength(2);
	});

	it("answers 409 for a subscription not active in the current period", async () => {
		const { subscription } = await customer(plan);
		await env.DB.prepare("UPDATE subscriptions SET status = 'cancelled', cancelled_at = ?1 WHERE id = ?2")
			.bind(monthStart(0).toISOString(), subscription.id)
			.run();
		expectError(await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`), 409, "conflict");
	});

	it("answers 400 without subscription_id, 404 for an unknown one or one of the other environment", async () => {
		expectError(await get("/v1/invoices/upcoming"), 400, "validation_error");
		expectError(await get("/v1/invoices/upcoming?subscription_id=sub_missing"), 404, "not_found");
		const { subscription } = await customer(plan);
		const testKey = await createKey("read-only", "test");
		expectError(
			await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`, { key: testKey }),
			404,
			"not_found",
		);
	});

	it("may be read with a read-only key, not with an SDK key", async () => {
		const { subscription } = await customer(plan);
		const path = `/v1/invoices/upcoming?subscription_id=${subscription.id}`;
		expect((await get(path, { key: await createKey("read-only") })).status).toBe(200);
		expectError(await get(path, { key: await createKey("sdk") }), 403, "forbidden");
		// A POST is not a route of this path.
		expect((await post("/v1/invoices/upcoming", {})).status).toBe(405);
	});
});
