import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, expectError, get } from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";

// GET /v1/invoices/{id}/pdf (§20), inside the Workers runtime: the fonts come bundled as Data modules.
async function pdf(path: string, key: string = ADMIN_KEY) {
	const response = await exports.default.fetch(
		new Request(`https://billing.test${path}`, { headers: { Authorization: `Bearer ${key}` } }),
	);
	return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** The text of the PDF's literal strings is hex glyph ids once fonts are embedded; its metadata stays readable. */
const latin1 = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);

describe("GET /v1/invoices/{invoice_id}/pdf", () => {
	it("answers the invoice as a PDF with the fonts embedded", async () => {
		const { account } = await customer({ base_fee: 49, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const { response, bytes } = await pdf(`/v1/invoices/${invoice.id}/pdf`);
		expect(response.status).toBe(200);
		expect(response.headers.get("Content-Type")).toBe("application/pdf");
		expect(response.headers.get("Content-Disposition")).toBe(`inline; filename="${invoice.number}.pdf"`);
		const text = latin1(bytes);
		expect(text.startsWith("%PDF-1.")).toBe(true);
		expect(text).toContain("/FontFile2"); // an embedded TrueType font program
		expect(text).toContain("/ToUnicode"); // so that the text can be extracted
		expect(bytes.length).toBeGreaterThan(10_000);
	});

	it("names the seller from BILLING_COMPANY_NAME, by default Agent Metering & Billing", async () => {
		const { account } = await customer({ base_fee: 49, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const { bytes } = await pdf(`/v1/invoices/${invoice.id}/pdf`);
		// pdf-lib writes the document's author as a UTF-16 hex string.
		const hex = [..."Agent Metering & Billing"]
			.map((ch) => ch.charCodeAt(0).toString(16).padStart(4, "0"))
			.join("")
			.toUpperCase();
		expect(latin1(bytes).toUpperCase()).toContain(hex);
	});

	it("answers 404 for an unknown invoice or one of the other environment", async () => {
		expectError(await get("/v1/invoices/inv_missing/pdf"), 404, "not_found");
		const { account } = await customer({ base_fee: 49, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const testKey = await createKey("read-only", "test");
		expectError(await get(`/v1/invoices/${invoice.id}/pdf`, { key: testKey }), 404, "not_found");
	});

	it("is readable with a read-only key, not with an SDK key or none", async () => {
		const { account } = await customer({ base_fee: 49, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const { response } = await pdf(`/v1/invoices/${invoice.id}/pdf`, await createKey("read-only"));
		expect(response.status).toBe(200);
		expectError(
			await get(`/v1/invoices/${invoice.id}/pdf`, { key: await createKey("sdk") }),
			403,
			"forbidden",
		);
		expectError(await get(`/v1/invoices/${invoice.id}/pdf`, { key: null }), 401, "unauthorized");
	});
});
