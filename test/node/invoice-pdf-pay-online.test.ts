import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { renderInvoicePdf } from "../../src/documents/invoice-pdf";
import { collectionView } from "../../src/invoicing/collection-view";
import type { InvoiceView } from "../../src/invoicing/invoices";
import { fonts, pdfText } from "./pdf-support";

// An open invoice collected through Stripe Checkout says where to pay it (docs/payments.md#collection): a line
// "Pay online: <url>" that pdftotext reads, and a link a PDF reader opens.

const CHECKOUT =
	"https://checkout.stripe.com/pay/c/cs_test_a12et9VnHfV9NETJktvuOmVoyrOB40recOCQWiVNeDlBe4IqxEIRNi1Qdf";

function collected(status: InvoiceView["status"], paymentUrl: string | null): InvoiceView {
	return {
		id: "inv_01jd00000000000000000000pay",
		number: "INV-000077",
		account_id: "acct_01jd0000000000000000000000",
		payer_account_id: "acct_01jd0000000000000000000000",
		subscription_id: "sub_01jd0000000000000000000000",
		rate_plan_id: "plan_01jd0000000000000000000000",
		billing_period: "2026-10",
		period_start: "2026-10-01T00:00:00.000Z",
		period_end: "2026-11-01T00:00:00.000Z",
		kind: "regular",
		status,
		currency: "EUR",
		line_items: [
			{
				metric: "base_fee",
				description: "Base fee",
				quantity: 1,
				amount: 250,
				original_amount: 250,
				original_currency: "EUR",
			},
		],
		exchange_rate: null,
		amount: 250,
		issued_at: "2026-11-01T00:05:00.000Z",
		paid_at: status === "paid" ? "2026-11-02T00:00:00.000Z" : null,
		voided_at: null,
		created_at: "2026-11-01T00:05:00.000Z",
		due_at: "2026-12-01T00:05:00.000Z",
		bill_to: { name: "Initech", email: "ap@initech.example", billing_address: null },
		credits_applied: 0,
		amount_due: 250,
		amount_paid: status === "paid" ? 250 : 0,
		amount_remaining: status === "paid" ? 0 : 250,
		payments: [],
		amount_credited: 0,
		credit_notes: [],
		collection: collectionView({
			collectionProvider: "stripe",
			collectionStatus: status === "paid" ? "succeeded" : "pending",
			collectionCheckoutSessionId: "cs_test_a12et9VnHfV9NETJktvuOmVoyrOB40",
			collectionPaymentUrl: paymentUrl,
		}),
	};
}

/** The URIs of the link annotations of every page. */
async function linkTargets(bytes: Uint8Array): Promise<string[]> {
	const doc = await PDFDocument.load(bytes);
	return doc.getPages().flatMap((page) => {
		const annots = page.node.lookupMaybe(PDFName.of("Annots"), PDFArray);
		if (!annots) return [];
		return annots.asArray().flatMap((ref) => {
			const action = doc.context.lookup(ref, PDFDict).lookupMaybe(PDFName.of("A"), PDFDict);
			const uri = action?.lookupMaybe(PDFName.of("URI"), PDFString, PDFHexString);
			return uri ? [uri.decodeText()] : [];
		});
	});
}

describe("invoice PDF: pay online", { timeout: 60_000 }, () => {
	it("an open invoice with a payment link shows 'Pay online: <url>' on one line, and links it", async () => {
		const bytes = await renderInvoicePdf(collected("open", CHECKOUT), { seller: "Acme Billing", fonts });
		const text = pdfText(bytes, "invoice-pay-online");
		expect(text).toContain(`Pay online: ${CHECKOUT}\n`);
		expect(pdfText(bytes, "invoice-pay-online", { reading: true })).toContain(`Pay online: ${CHECKOUT}`);
		expect(await linkTargets(bytes)).toEqual([CHECKOUT]);
		// Still the invoice's own sentence before it.
		expect(text).toContain("Please pay EUR 250.00 by December 1, 2026, quoting INV-000077.");
	});

	it("a link too long for one line is still there whole: broken over lines, linked once", async () => {
		const long = `${CHECKOUT}#${"fidkdWxOYHwnPyd1blpxYHZxWjA0".repeat(9)}`;
		const bytes = await renderInvoicePdf(collected("open", long), { seller: "Acme Billing", fonts });
		const text = pdfText(bytes, "invoice-pay-online-long", { reading: true });
		expect(text).toContain("Pay online:");
		const after = text.slice(text.indexOf("Pay online:") + "Pay online:".length);
		expect(after.replace(/\s+/g, "").startsWith(long)).toBe(true);
		expect(await linkTargets(bytes)).toEqual([long]);
	});

	it("says nothing of paying online once paid, or without a link", async () => {
		for (const [name, invoice] of [
			["paid", collected("paid", CHECKOUT)],
			["no-link", collected("open", null)],
		] as const) {
			const bytes = await renderInvoicePdf(invoice, { seller: "Acme Billing", fonts });
			expect(pdfText(bytes, `invoice-pay-online-${name}`)).not.toContain("Pay online");
			expect(await linkTargets(bytes)).toEqual([]);
		}
	});
});
