import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { issueWaitingInvoices } from "../../src/invoicing/conversion-waits";
import { expectError, get, post } from "../helpers";
import {
	actions,
	currentPeriod,
	generate,
	generateOne,
	invoicesOf,
	sendActions,
	shiftPeriod,
} from "../invoicing/fixtures";
import { addRate, foreignCustomer, over, times } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const lineOf = (invoice: { line_items: any[] }, metric: string) =>
	invoice.line_items.find((line) => line.metric === metric);

describe("invoices converted per line to the billing currency", () => {
	it("rates in the plan's currency, rounds, converts at the rate in effect and rounds again per line", async () => {
		await addRate("USD", "EUR", 0.5, "2020-01-01T00:00:00Z");
		const rate = await addRate("USD", "EUR", 0.923456789, new Date(Date.now() - DAY).toISOString());
		await addRate("USD", "EUR", 2, "2099-01-01T00:00:00Z");
		const { account, instance, subscription } = await foreignCustomer("USD", "EUR");
		expect(subscription.billing_currency).toBe("EUR");
		// 1,234 tokens at 0.0013 = 1.6042 → 1.60 USD; base fee 10 USD.
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1234 }));
		const invoice = await generateOne(currentPeriod(), account.id);
		const base = times("10", "0.923456789", 2); // 9.23456789 → 9.23
		const tokens = times("1.60", "0.923456789", 2); // 1.4775308624 → 1.48
		expect([base, tokens]).toEqual([9.23, 1.48]);
		expect(invoice.currency).toBe("EUR");
		expect((invoice as any).exchange_rate).toEqual({
			base: "USD",
			quote: "EUR",
			rate: 0.923456789,
			effective_at: rate.effective_at,
		});
		expect(lineOf(invoice, "base_fee")).toMatchObject({
			amount: base,
			original_amount: 10,
			original_currency: "USD",
		});
		expect(lineOf(invoice, "tokens")).toMatchObject({
			quantity: 1234,
			amount: tokens,
			original_amount: 1.6,
			original_currency: "USD",
		});
		expect(invoice.amount).toBe(10.71);
		const stored = await get(`/v1/invoices/${invoice.id}`);
		expect(stored.body).toEqual(invoice);
		const rows = await env.DB.prepare(
			"SELECT amount, original_amount, original_currency FROM invoice_lines WHERE invoice_id = ? ORDER BY position",
		)
			.bind(invoice.id)
			.all();
		expect(rows.results).toEqual([
			{ amount: "9.23", original_amount: "10", original_currency: "USD" },
			{ amount: "1.48", original_amount: "1.6", original_currency: "USD" },
		]);
	});

	it("uses the reverse pair as an exact quotient rounded once at the line, to JPY's 0 decimals", async () => {
		const reverse = await addRate("JPY", "USD", 0.0067, "2020-01-01T00:00:00Z");
		const { account, instance } = await foreignCustomer("USD", "JPY");
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1234 }));
		const invoice = await generateOne(currentPeriod(), account.id);
		const base = over("10", "0.0067", 0); // 1492.537… → 1493
		const tokens = over("1.60", "0.0067", 0); // 238.805… → 239
		expect([base, tokens]).toEqual([1493, 239]);
		expect(invoice.currency).toBe("JPY");
		expect((invoice as any).exchange_rate).toEqual({
			base: "JPY",
			quote: "USD",
			rate: 0.0067,
			effective_at: reverse.effective_at,
		});
		expect(invoice.line_items.map((l) => l.amount)).toEqual([base, tokens]);
		expect(invoice.amount).toBe(1732);
	});

	it("rounds to BHD's 3 decimals, and converts the minimum like a line", async () => {
		await addRate("EUR", "BHD", 0.40912345, "2020-01-01T00:00:00Z");
		const { account, instance } = await foreignCustomer("EUR", "BHD", { minimum_amount: 25 });
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1234 }));
		const invoice = await generateOne(currentPeriod(), account.id);
		const base = times("10", "0.40912345", 3); // 4.0912345 → 4.091
		const tokens = times("1.60", "0.40912345", 3); // 0.65459752 → 0.655
		const minimum = times("25", "0.40912345", 3); // 10.22808625 → 10.228
		expect([base, tokens, minimum]).toEqual([4.091, 0.655, 10.228]);
		expect(invoice.line_items).toEqual([
			expect.objectContaining({ metric: "base_fee", amount: base, original_currency: "EUR" }),
			expect.objectContaining({ metric: "tokens", amount: tokens, original_currency: "EUR" }),
			// The top-up is computed in the billing currency from the converted lines.
			expect.objectContaining({
				metric: "minimum_commitment",
				amount: 5.482,
				original_amount: 5.482,
				original_currency: "BHD",
			}),
		]);
		expect(invoice.amount).toBe(10.228);
	});

	it("shows exchange_rate null and original amounts equal to the amounts without conversion", async () => {
		const { account, instance } = await foreignCustomer("USD", "USD");
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect((invoice as any).exchange_rate).toBeNull();
		for (const line of invoice.line_items as any[]) {
			expect(line.original_amount).toBe(line.amount);
			expect(line.original_currency).toBe("USD");
		}
	});

	it("takes billing_currency from the subscription, not the account", async () => {
		await addRate("GBP", "CHF", 1.12, "2020-01-01T00:00:00Z");
		const { account, instance } = await foreignCustomer("GBP", "USD", {}, { billing_currency: "CHF" });
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		const invoice = await generateOne(currentPeriod(), account.id);
		expect(invoice.currency).toBe("CHF");
		// 10 GBP → 11.20 CHF; 1,000 × 0.0013 = 1.30 GBP → 1.456 → 1.46 CHF.
		expect(invoice.line_items.map((l) => l.amount)).toEqual([11.2, 1.46]);
	});
});

describe("supplementary invoices in another currency", () => {
	it("convert the difference of the original amounts; a new rate alone makes no invoice", async () => {
		await addRate("USD", "SEK", 10, new Date(Date.now() - DAY).toISOString());
		const { account, instance } = await foreignCustomer("USD", "SEK");
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		const regular = await generateOne(currentPeriod(), account.id);
		expect(regular.line_items.map((l) => l.amount)).toEqual([100, 13]);
		await addRate("USD", "SEK", 11.5);
		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });
		// 500 more tokens: 1,500 × 0.0013 = 1.95 USD, 0.65 USD more → 7.475 → 7.48 SEK at the new rate.
		await sendActions(actions(instance, "llm_call", 1, { tokens: 500 }));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(supplementary.kind).toBe("supplementary");
		expect(supplementary.line_items).toEqual([
			expect.objectContaining({
				metric: "tokens",
				amount: 7.48,
				original_amount: 0.65,
				original_currency: "USD",
			}),
		]);
		expect((supplementary as any).exchange_rate.rate).toBe(11.5);
	});
});

describe("no rate in effect", () => {
	it("issues the other invoices, answers 409 naming the pair, and the cron issues it once a rate exists", async () => {
		const started = new Date(Date.now() - 34 * DAY).toISOString();
		const period = started.slice(0, 7);
		expect(period < currentPeriod() || period === shiftPeriod(currentPeriod(), 0)).toBe(true);
		const { account, plan } = await foreignCustomer("USD", "USD", {}, { started_at: started });
		const gbpPlan = await post("/v1/pricing/rate-plans", {
			name: "GBP-billed",
			currency: "USD",
			base_fee: 20,
			charges: [],
		});
		const gbp = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: gbpPlan.body.id,
			agent_instance_ids: [`gbp-${crypto.randomUUID().slice(0, 8)}`],
			billing_currency: "GBP",
			started_at: started,
		});
		expect(gbp.status, JSON.stringify(gbp.body)).toBe(201);
		const refused = await post("/v1/invoices/generate", { billing_period: period, account_id: account.id });
		const error = expectError(refused, 409, "conflict");
		expect(error.message).toContain("no USD→GBP exchange rate in effect");
		const issued = await invoicesOf(account.id);
		expect(issued.every((invoice) => invoice.subscription_id !== gbp.body.id)).toBe(true);
		if (period === currentPeriod()) return; // the first days of a month: no past period to retry
		expect(issued.map((i) => i.rate_plan_id)).toEqual([plan.id]);
		// Still no rate: the cron leaves it waiting.
		await issueWaitingInvoices(env, new Date());
		expect((await invoicesOf(account.id)).length).toBe(1);
		await addRate("GBP", "USD", 1.25);
		await issueWaitingInvoices(env, new Date());
		const after = await invoicesOf(account.id);
		const converted = after.find((invoice) => invoice.subscription_id === gbp.body.id);
		expect(converted).toMatchObject({ currency: "GBP", amount: 16, billing_period: period });
		const waits = await env.DB.prepare("SELECT count(*) AS n FROM conversion_waits WHERE subscription_id = ?")
			.bind(gbp.body.id)
			.first<{ n: number }>();
		expect(waits?.n).toBe(0);
	});
});

describe("GET /v1/usage in the billing currency", () => {
	it("converts at the rate in effect now, and answers 409 naming the pair when there is none", async () => {
		const { instance, subscription } = await foreignCustomer("USD", "DKK");
		await sendActions(actions(instance, "llm_call", 1, { tokens: 1000 }));
		const refused = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(expectError(refused, 409, "conflict").message).toContain("no USD→DKK exchange rate in effect");
		await addRate("USD", "DKK", 6.85);
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		// 10 USD → 68.50 DKK; 1.30 USD → 8.905 → 8.91 DKK.
		expect(usage.body.currency).toBe("DKK");
		expect(usage.body.charges.map((c: { amount: number }) => c.amount)).toEqual([68.5, 8.91]);
		expect(usage.body.total).toBe(77.41);
	});
});
