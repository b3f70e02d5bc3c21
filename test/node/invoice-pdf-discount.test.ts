import { describe, expect, it } from "vitest";
import { renderInvoicePdf } from "../../src/documents/invoice-pdf";
import { collectionView } from "../../src/invoicing/collection-view";
import type { InvoiceView } from "../../src/invoicing/invoices";
import { fonts, pdfText } from "./pdf-support";

// An invoice with a coupon's discount line (docs/discounts.md), read back with pdftotext as customers' tools do.

const discounted: InvoiceView = {
	id: "inv_01jd0000000000000000000001",
	number: "INV-000043",
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
			amount: 100,
			original_amount: 100,
			original_currency: "USD",
		},
		{
			metric: "calls",
			description: "Calls — 400 units",
			quantity: 400,
			amount: 150,
			original_amount: 150,
			original_currency: "USD",
		},
		{
			metric: "discount",
			description: "LAUNCH20 (20% off)",
			quantity: 1,
			amount: -50,
			original_amount: -50,
			original_currency: "USD",
		},
	],
	amount: 200,
	issued_at: "2026-11-01T00:05:00.000Z",
	paid_at: null,
	voided_at: null,
	created_at: "2026-11-01T00:05:00.000Z",
	due_at: "2026-12-01T00:05:00.000Z",
	bill_to: { name: "Globex Corporation", email: "ap@globex.example", billing_address: null },
	credits_applied: 0,
	amount_due: 200,
	amount_paid: 0,
	amount_remaining: 200,
	amount_credited: 0,
	credit_notes: [],
	collection: collectionView({}),
	payments: [],
};

describe("invoice PDF with a discount", { timeout: 60_000 }, () => {
	it("shows the discount line with its code and negative amount, and the discounted total", async () => {
		const bytes = await renderInvoicePdf(discounted, { seller: "Agent Metering & Billing", fonts });
		const text = pdfText(bytes, "invoice-discount");
		expect(text).toMatch(/LAUNCH20 \(20% off\)\s+1\s+-USD 50\.00/);
		expect(text).toMatch(/Amount due\s+USD 200\.00/);
	});
});
