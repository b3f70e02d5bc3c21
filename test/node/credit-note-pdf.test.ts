import { describe, expect, it } from "vitest";
import type { CreditNoteView } from "../../src/credit-notes/credit-notes";
import { renderCreditNotePdf } from "../../src/documents/credit-note-pdf";
import { renderInvoicePdf } from "../../src/documents/invoice-pdf";
import { collectionView } from "../../src/invoicing/collection-view";
import type { InvoiceView } from "../../src/invoicing/invoices";
import { fonts, pdfText } from "./pdf-support";

// The credit note document (docs/credit-notes.md), read back with pdftotext as a customer's tools would.
const invoice = {
	id: "inv_01jd0000000000000000000000",
	number: "INV-000042",
	billing_period: "2026-10",
	currency: "USD",
	bill_to: { name: "Globex Corporation", email: "accounts-payable@globex.example", billing_address: null },
	collection: collectionView({}),
} as InvoiceView;

const note: CreditNoteView = {
	id: "cn_01jd0000000000000000000000",
	number: "CN-000007",
	invoice_id: invoice.id,
	account_id: "acct_01jd0000000000000000000000",
	currency: "USD",
	amount: 1250.5,
	reason: "billing_error",
	memo: "Tokens of the 12th were metered twice.",
	lines: [
		{ description: "Duplicate GPT-4o tokens of November 12", amount: 1000 },
		{ description: "Goodwill", amount: 250.5 },
	],
	applied: { to_invoice: 1000, refunded: 0, credited: 250.5 },
	created_at: "2026-11-20T10:00:00.000Z",
};

describe("credit note PDF", { timeout: 60_000 }, () => {
	it("holds the credit note's and the invoice's numbers, the lines, where the money went and the total", async () => {
		const bytes = await renderCreditNotePdf(note, invoice, { seller: "Agent Metering & Billing", fonts });
		expect(bytes.length).toBeLessThan(102_400);
		const text = pdfText(bytes, "credit-note-sample");
		for (const expected of [
			"Agent Metering & Billing",
			"CREDIT NOTE",
			"CN-000007",
			"INV-000042",
			"November 20, 2026",
			"October 2026",
			"Billing error",
			"Globex Corporation",
			"Tokens of the 12th were metered twice.",
		]) {
			expect(text, text).toContain(expected);
		}
		expect(text).toMatch(/Duplicate GPT-4o tokens of November 12\s+USD 1,000\.00/);
		expect(text).toMatch(/Goodwill\s+USD 250\.50/);
		expect(text).toMatch(/Off the amount due\s+USD 1,000\.00/);
		expect(text).toMatch(/Given as credit\s+USD 250\.50/);
		expect(text).toMatch(/Total credited USD 1,250\.50/);
	});
});

describe("invoice PDF with credit notes", { timeout: 60_000 }, () => {
	it("shows what credit notes took off, so the totals add up to the amount due", async () => {
		const credited = {
			...invoice,
			status: "open",
			kind: "regular",
			issued_at: "2026-11-01T00:00:00.000Z",
			due_at: "2026-12-01T00:00:00.000Z",
			period_start: "2026-10-01T00:00:00.000Z",
			period_end: "2026-11-01T00:00:00.000Z",
			paid_at: null,
			voided_at: null,
			exchange_rate: null,
			line_items: [
				{
					metric: "base_fee",
					description: "Base fee",
					quantity: 1,
					amount: 100,
					original_amount: 100,
					original_currency: "USD",
				},
			],
			amount: 100,
			credits_applied: 10,
			amount_due: 60,
			amount_paid: 0,
			amount_remaining: 60,
			payments: [],
			amount_credited: 30,
			credit_notes: ["cn_01jd0000000000000000000000"],
		} as InvoiceView;
		const text = pdfText(
			await renderInvoicePdf(credited, { seller: "Agent Metering & Billing", fonts }),
			"invoice-credited",
		);
		expect(text).toMatch(/Credits applied\s+-USD 10\.00/);
		expect(text).toMatch(/Credit notes\s+-USD 30\.00/);
		expect(text).toMatch(/Amount due\s+USD 60\.00/);
	});
});

describe("invoice PDF after a refunding credit note", { timeout: 60_000 }, () => {
	// Paid 100, then credit note CN-000005 refunded 25.50 of it: due 100 − paid net 74.50 − refunded 25.50 = 0.
	const refunded = {
		...invoice,
		status: "paid",
		kind: "regular",
		issued_at: "2026-11-01T00:00:00.000Z",
		due_at: "2026-12-01T00:00:00.000Z",
		period_start: "2026-10-01T00:00:00.000Z",
		period_end: "2026-11-01T00:00:00.000Z",
		paid_at: "2026-11-10T00:00:00.000Z",
		voided_at: null,
		line_items: [{ metric: "base_fee", description: "Base fee", quantity: 1, amount: 100 }],
		amount: 100,
		credits_applied: 0,
		amount_due: 100,
		amount_paid: 74.5,
		amount_remaining: 0,
		payments: [
			{ id: "pay_1", amount: 100, reference: "wire-7", paid_at: "2026-11-10T00:00:00.000Z" },
			{ id: "pay_2", amount: -25.5, reference: "CN-000005", paid_at: "2026-11-22T00:00:00.000Z" },
		],
		amount_credited: 25.5,
		credit_notes: ["cn_5"],
	} as InvoiceView;
	const refundNote: CreditNoteView = {
		...note,
		id: "cn_5",
		number: "CN-000005",
		amount: 25.5,
		reason: "product_unsatisfactory",
		lines: [],
		memo: null,
		applied: { to_invoice: 0, refunded: 25.5, credited: 0 },
		created_at: "2026-11-22T00:00:00.000Z",
	};

	it("lists the credit note and the refund as their own lines, never a negative paid line", async () => {
		const bytes = await renderInvoicePdf(refunded, {
			seller: "Agent Metering & Billing",
			fonts,
			creditNotes: [refundNote],
		});
		expect(bytes.length).toBeLessThan(102_400);
		const text = pdfText(bytes, "invoice-refunded");
		expect(text.split("\f").filter((page) => page.trim() !== "")).toHaveLength(1);
		expect(text).toMatch(/Amount due\s+USD 100\.00/);
		expect(text).toMatch(/Amount paid, net of refunds\s+USD 74\.50\n/);
		expect(text).toMatch(/Refunded, credit note CN-000005\s+USD 25\.50\n/);
		expect(text).toMatch(/Amount remaining\s+USD 0\.00\n/);
		expect(text).toContain("Paid USD 100.00 on November 10, 2026 — reference wire-7.");
		expect(text).toContain("Refunded USD 25.50 on November 22, 2026 — credit note CN-000005.");
		expect(text).toMatch(/Credit note CN-000005 of USD 25\.50 \(November 22, 2026, product unsatisfactory\)/);
		expect(text).not.toMatch(/Paid -/);
		expect(text).not.toContain("-USD 25.50");
	});

	it("lists each credit note's number and amount, and what it took off the amount due", async () => {
		const open = {
			...refunded,
			status: "open",
			paid_at: null,
			amount_due: 70,
			amount_paid: 0,
			amount_remaining: 70,
			payments: [],
			amount_credited: 40,
			credit_notes: ["cn_3", "cn_4"],
		} as InvoiceView;
		const notes = [
			{ ...refundNote, id: "cn_3", number: "CN-000003", amount: 20, reason: "billing_error" as const },
			{ ...refundNote, id: "cn_4", number: "CN-000004", amount: 20, reason: "duplicate" as const },
		].map((n) => ({
			...n,
			applied: {
				to_invoice: n.number === "CN-000003" ? 20 : 10,
				refunded: 0,
				credited: n.number === "CN-000003" ? 0 : 10,
			},
		}));
		const text = pdfText(
			await renderInvoicePdf(open, { seller: "Agent Metering & Billing", fonts, creditNotes: notes }),
			"invoice-two-credit-notes",
		);
		expect(text).toMatch(/Credit notes\s+-USD 30\.00/);
		expect(text).toMatch(/Amount due\s+USD 70\.00/);
		expect(text).toMatch(
			/Credit note CN-000003 of USD 20\.00 \(November 22, 2026, billing error\): USD 20\.00 off the amount due\./,
		);
		expect(text).toMatch(
			/Credit note CN-000004 of USD 20\.00 \(November 22, 2026, duplicate charge\): USD 10\.00 off the amount due,\sUSD 10\.00 returned as account credit\./,
		);
	});
});
