/**
 * The payment link of an invoice collected through Stripe Checkout, where the customer finds it: the invoice's PDF
 * (as the API and the portal serve it) says "Pay online: <url>", and the portal's invoice carries it.
 */
import { exports } from "cloudflare:workers";
import { it } from "vitest";
import { pdfLines } from "../acceptance/pdf-text";
import { post } from "../helpers";
import { mint, portalGet } from "../portal/fixtures";
import { asked, stripeInvoice } from "./fixtures";
import { describeWithStripe, expect } from "./stripe";

async function pdfOf(path: string, key: string) {
	const response = await exports.default.fetch(
		new Request(`https://billing.test${path}`, { headers: { Authorization: `Bearer ${key}` } }),
	);
	expect(response.status, path).toBe(200);
	return pdfLines(new Uint8Array(await response.arrayBuffer()));
}

describeWithStripe("the payment link of an invoice paid on Stripe's Checkout page", () => {
	it("is in the PDF of the open invoice and on the portal's invoice", async () => {
		const { key, account, invoice } = await stripeInvoice({ baseFee: 75, paymentMethod: null });
		const { collection } = await asked(invoice.id);
		const url = collection.payment_url as string;
		expect(url).toMatch(/^https:\/\//);

		expect(await pdfOf(`/v1/invoices/${invoice.id}/pdf`, key)).toContain(`Pay online: ${url}`);
		const { token } = await mint(account.id, {}, key);
		expect(await pdfOf(`/portal/api/invoices/${invoice.id}/pdf`, token)).toContain(`Pay online: ${url}`);
		const shown = await portalGet(`/invoices/${invoice.id}`, token);
		expect(shown.status).toBe(200);
		expect(shown.body.collection.payment_url).toBe(url);
		const listed = await portalGet("/invoices", token);
		expect(listed.body.invoices[0].collection.payment_url).toBe(url);

		// Paid, there is nothing to pay online any more.
		expect((await post(`/v1/invoices/${invoice.id}/pay`, {}, { key })).status).toBe(200);
		const lines = await pdfOf(`/v1/invoices/${invoice.id}/pdf`, key);
		expect(lines.some((line) => line.includes("Pay online"))).toBe(false);
	});

	it("is absent from the PDF of an invoice charged to a saved payment method", async () => {
		const { key, invoice } = await stripeInvoice({ baseFee: 75 });
		await asked(invoice.id);
		const lines = await pdfOf(`/v1/invoices/${invoice.id}/pdf`, key);
		expect(lines.some((line) => line.includes("Pay online"))).toBe(false);
		expect(lines.some((line) => line.includes("Amount due"))).toBe(true);
	});
});
