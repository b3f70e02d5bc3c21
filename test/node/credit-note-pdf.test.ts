import { describe, expect, it } from "vitest";
import type { CreditNoteView } from "../../src/credit-notes/credit-notes";
import { renderCreditNotePdf } from "../../src/documents/credit-note-pdf";
import { renderInvoicePdf } from "../../src/documents/invoice-pdf";
import type { InvoiceView } from "../../src/invoicing/invoices";
import { fonts, pdfText } from "./pdf-support";

// The credit note document (docs/credit-notes.md), read back with pdftotext as a customer's tools would.
const invoice = {
	id: "inv_01jd0000000000000000000000",
	number: "INV-000042",
	billing_period: "2026-10",
	currency: "USD",
	bill_to: { name: "Globex Corporation", email: "accounts-payable@globex.example", billing_address: null },
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
			line_items: [{ metric: "base_fee", description: "Base fee", quantity: 1, amount: 100 }],
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
