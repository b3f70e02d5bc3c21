import { describe, expect, it } from "vitest";
import { renderInvoicePdf } from "../../src/documents/invoice-pdf";
import { collectionView } from "../../src/invoicing/collection-view";
import type { InvoiceView } from "../../src/invoicing/invoices";
import { fonts, pdfText } from "./pdf-support";

// The invoice document (§20), read back the way a customer's tools read it: pdftotext (Debian poppler-utils,
// installed by .ci/run) must find the invoice number, its dates, every line and the amount due.

const sampleInvoice: InvoiceView = {
	id: "inv_01jd0000000000000000000000",
	number: "INV-000042",
	account_id: "acct_01jd0000000000000000000000",
	payer_account_id: "acct_01jd0000000000000000000000",
	subscription_id: "sub_01jd0000000000000000000000",
	rate_plan_id: "plan_01jd0000000000000000000000",
	billing_period: "2026-10",
	period_start: "2026-10-01T00:00:00.000Z",
	period_end: "2026-11-01T00:00:00.000Z",
	kind: "regular",
	status: "open",
	currency: "USD",
	exchange_rate: null,
	line_items: [
		{
			metric: "base_fee",
			description: "Base fee",
			quantity: 1,
			amount: 499,
			original_amount: 499,
			original_currency: "USD",
		},
		{
			metric: "gpt4o_tokens",
			description: "GPT-4o tokens — 18,250,000 units (first 1,000,000 included)",
			quantity: 18250000,
			amount: 862.5,
			original_amount: 862.5,
			original_currency: "USD",
		},
		{
			metric: "gpt4o_mini_tokens",
			description: "GPT-4o mini tokens — 96,400,000 units",
			quantity: 96400000,
			amount: 144.6,
			original_amount: 144.6,
			original_currency: "USD",
		},
		{
			metric: "tool_calls",
			description: "Tool calls — 12,840 units",
			quantity: 12840,
			amount: 64.2,
			original_amount: 64.2,
			original_currency: "USD",
		},
		{
			metric: "resolved_tickets",
			description: "Resolved tickets — 1,312 units",
			quantity: 1312,
			amount: 1312,
			original_amount: 1312,
			original_currency: "USD",
		},
	],
	amount: 2882.3,
	issued_at: "2026-11-01T00:05:00.000Z",
	paid_at: null,
	voided_at: null,
	created_at: "2026-11-01T00:05:00.000Z",
	due_at: "2026-12-01T00:05:00.000Z",
	bill_to: {
		name: "Globex Corporation",
		email: "accounts-payable@globex.example",
		billing_address: {
			street: "500 Innovation Way",
			city: "Springfield",
			state: "OR",
			zip: "97477",
			country: "US",
		},
	},
	credits_applied: 1000,
	amount_due: 1882.3,
	amount_paid: 0,
	amount_remaining: 1882.3,
	payments: [],
	amount_credited: 0,
	credit_notes: [],
	collection: collectionView({}),
};

describe("invoice PDF (§20)", { timeout: 60_000 }, () => {
	it("is a PDF whose text holds the seller, number, dates, bill-to, every line, credits and amount due", async () => {
		const bytes = await renderInvoicePdf(sampleInvoice, { seller: "Agent Metering & Billing", fonts });
		expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
		const text = pdfText(bytes, "invoice-sample");
		for (const expected of [
			"Agent Metering & Billing",
			"INVOICE",
			"INV-000042",
			"November 1, 2026", // issued
			"December 1, 2026", // due
			"October 2026",
			"2026-10-01 to 2026-10-31",
			"Globex Corporation",
			"accounts-payable@globex.example",
			"500 Innovation Way",
			"Springfield, OR 97477",
			"OPEN",
			"Subtotal",
			"USD 2,882.30",
			"Credits applied",
			"-USD 1,000.00",
			"Amount due",
			"USD 1,882.30",
			"Page 1 of 1",
			"Amount paid",
		]) {
			expect(text, text).toContain(expected);
		}
		// Each line with its quantity and amount on one row.
		expect(text).toMatch(/Base fee\s+1\s+USD 499\.00/);
		// A description too long for its column wraps under itself; quantity and amount stay on its first row.
		expect(text).toMatch(
			/GPT-4o tokens — 18,250,000 units \(first 1,000,000\s+18,250,000\s+USD 862\.50\s+included\)/,
		);
		expect(text).toMatch(/GPT-4o mini tokens — 96,400,000 units\s+96,400,000\s+USD 144\.60/);
		expect(text).toMatch(/Tool calls — 12,840 units\s+12,840\s+USD 64\.20/);
		expect(text).toMatch(/Resolved tickets — 1,312 units\s+1,312\s+USD 1,312\.00/);
		// Nothing paid yet: all of the amount due remains.
		expect(text).toMatch(/Amount paid[ \t]+USD 0\.00\n/);
		expect(text).toMatch(/Amount remaining[ \t]+USD 1,882\.30\n/);
	});

	it("continues the table on more pages when the lines need them, totals after the last line", async () => {
		const many = Array.from({ length: 70 }, (_, i) => ({
			metric: `metric_${i}`,
			description: `Metric ${i + 1} — ${i + 1} units`,
			quantity: i + 1,
			amount: i + 1,
			original_amount: i + 1,
			original_currency: "USD",
		}));
		const invoice = {
			...sampleInvoice,
			line_items: many,
			amount: 2485,
			credits_applied: 0,
			amount_due: 2485,
		};
		const text = pdfText(await renderInvoicePdf(invoice, { seller: "Acme Billing", fonts }), "invoice-long");
		const pages = text.split("\f").filter((page) => page.trim() !== "");
		expect(pages.length).toBeGreaterThan(1);
		expect(pages[0]).toContain(`Page 1 of ${pages.length}`);
		for (const page of pages) expect(page).toContain("DESCRIPTION");
		for (let i = 1; i <= 70; i++) expect(text).toContain(`Metric ${i} — ${i} units`);
		expect(pages.at(-1)).toContain("Amount due");
		expect(pages.at(-1)).toContain("USD 2,485.00");
	});

	it("says how a paid invoice was settled and that a void one is not due", async () => {
		const paid = {
			...sampleInvoice,
			status: "paid" as const,
			paid_at: "2026-11-20T09:00:00.000Z",
			amount_paid: 1882.3,
			amount_remaining: 0,
			payments: [
				{
					id: "pay_1",
					kind: "payment" as const,
					amount: 1882.3,
					reference: "wire-2026-001",
					provider: "manual" as const,
					paid_at: "2026-11-20T09:00:00.000Z",
				},
			],
		};
		const paidBytes = await renderInvoicePdf(paid, { seller: "Acme Billing", fonts });
		const paidText = pdfText(paidBytes, "invoice-paid");
		expect(paidText).toContain("PAID");
		expect(paidText).toContain("This invoice is paid: nothing remains due.");
		expect(paidText).toMatch(/Amount paid[ \t]+USD 1,882\.30\n/);
		// Label and figure on one line, whether the text is extracted by layout or in reading order.
		expect(paidText).toMatch(/Amount remaining[ \t]+USD 0\.00\n/);
		expect(pdfText(paidBytes, "invoice-paid", { reading: true })).toContain("Amount remaining USD 0.00\n");
		expect(paidText).toContain("Paid USD 1,882.30 on November 20, 2026 — reference wire-2026-001.");

		const voided = { ...sampleInvoice, status: "void" as const, voided_at: "2026-11-03T12:00:00.000Z" };
		const voidText = pdfText(
			await renderInvoicePdf(voided, { seller: "Acme Billing", fonts }),
			"invoice-void",
		);
		expect(voidText).toContain("VOID");
		expect(voidText).toContain("Voided on November 3, 2026");
	});

	it("writes a zero-decimal currency without minor digits", async () => {
		const yen = {
			...sampleInvoice,
			currency: "JPY",
			line_items: [
				{
					metric: "base_fee",
					description: "Base fee",
					quantity: 1,
					amount: 150000,
					original_amount: 150000,
					original_currency: "JPY",
				},
			],
			amount: 150000,
			credits_applied: 0,
			amount_due: 150000,
		};
		const text = pdfText(await renderInvoicePdf(yen, { seller: "Acme Billing", fonts }), "invoice-jpy");
		expect(text).toMatch(/Amount due\s+JPY 150,000\s/);
	});

	it("shows the exchange rate and each converted line's original amount", async () => {
		const euro = {
			...sampleInvoice,
			currency: "EUR",
			exchange_rate: {
				base: "USD",
				quote: "EUR",
				rate: 0.923456789,
				effective_at: "2026-10-15T00:00:00.000Z",
			},
			line_items: [
				{
					metric: "base_fee",
					description: "Base fee",
					quantity: 1,
					amount: 9.23,
					original_amount: 10,
					original_currency: "USD",
				},
			],
			amount: 9.23,
			credits_applied: 0,
			amount_due: 9.23,
		};
		const text = pdfText(await renderInvoicePdf(euro, { seller: "Acme Billing", fonts }), "invoice-eur");
		expect(text).toMatch(/Exchange rate\s+1 USD = 0\.923456789 EUR/);
		expect(text).toMatch(/Base fee \(USD 10\.00 before conversion\)\s+1\s+EUR 9\.23/);
	});
});
