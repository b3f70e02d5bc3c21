import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY } from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";

// The invoice PDF's fonts, read from its bytes inside the Workers runtime: a one-page invoice stays small because
// only the glyphs it uses are embedded, and each such subset is named as PDF requires (ABCDEF+Name), so readers
// and pdffonts know it is one. (test/node/font-subsets.test.ts reads them back with poppler.)

const MAX_ONE_PAGE_BYTES = 102_400;
/** The standard 14 fonts every PDF reader has: they need no embedding, so no subset tag. */
const STANDARD_14 = new Set([
	"Times-Roman",
	"Times-Bold",
	"Times-Italic",
	"Times-BoldItalic",
	"Helvetica",
	"Helvetica-Bold",
	"Helvetica-Oblique",
	"Helvetica-BoldOblique",
	"Courier",
	"Courier-Bold",
	"Courier-Oblique",
	"Courier-BoldOblique",
	"Symbol",
	"ZapfDingbats",
]);

async function invoicePdf(): Promise<Uint8Array> {
	const { account } = await customer({ base_fee: 49, charges: [] });
	const invoice = await generateOne(currentPeriod(), account.id);
	const response = await exports.default.fetch(
		new Request(`https://billing.test/v1/invoices/${invoice.id}/pdf`, {
			headers: { Authorization: `Bearer ${ADMIN_KEY}` },
		}),
	);
	expect(response.status).toBe(200);
	return new Uint8Array(await response.arrayBuffer());
}

/** Every font name the file's font and font-descriptor dictionaries give (they are not compressed). */
function fontNames(bytes: Uint8Array): string[] {
	const text = new TextDecoder("latin1").decode(bytes);
	return [...text.matchAll(/\/(?:BaseFont|FontName)\s*\/([^\s/<>[\]()]+)/g)].map((m) => m[1] as string);
}

describe("the invoice PDF's fonts", () => {
	it(`keep a one-page invoice within ${MAX_ONE_PAGE_BYTES} bytes`, async () => {
		const bytes = await invoicePdf();
		expect(new TextDecoder("latin1").decode(bytes)).toContain("/Count 1");
		expect(bytes.length).toBeLessThanOrEqual(MAX_ONE_PAGE_BYTES);
	});

	it("are all subsets named ABCDEF+Name, or one of the standard 14", async () => {
		const names = fontNames(await invoicePdf());
		expect(names.length).toBeGreaterThan(0);
		for (const name of names) {
			if (STANDARD_14.has(name)) continue;
			expect(name).toMatch(/^[A-Z]{6}\+[A-Za-z0-9-]+$/);
		}
		// Inter, regular and semi-bold, each named alike in its font, CID font and descriptor dictionaries.
		const distinct = [...new Set(names)].map((name) => name.slice(7)).sort();
		expect(distinct).toEqual(["Inter-Regular", "Inter-SemiBold"]);
	});

	it("make the same invoice the same bytes each time", async () => {
		const { account } = await customer({ base_fee: 49, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const fetchPdf = async () =>
			new Uint8Array(
				await (
					await exports.default.fetch(
						new Request(`https://billing.test/v1/invoices/${invoice.id}/pdf`, {
							headers: { Authorization: `Bearer ${ADMIN_KEY}` },
						}),
					)
				).arrayBuffer(),
			);
		expect(await fetchPdf()).toEqual(await fetchPdf());
	});
});
