import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import fontkit from "@pdf-lib/fontkit";
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { subsetTag, subsettingFontkit, tagSubsetFonts } from "../../src/documents/font-subsets";
import { fonts } from "./pdf-support";

// Subset fonts, read back with poppler (Debian poppler-utils, installed by .ci/run): pdffonts must list every
// font as an embedded subset, pdftotext must still find the text, and a subset must draw exactly what the whole
// font draws. (invoice-pdf.test.ts reads the invoice itself back with pdftotext.)

function saved(bytes: Uint8Array, name: string): string {
	mkdirSync("test-results", { recursive: true });
	const path = `test-results/${name}.pdf`;
	writeFileSync(path, bytes);
	return path;
}

const poppler = (tool: string, args: string[]) => {
	try {
		return execFileSync(tool, args, { encoding: "utf8" });
	} catch (error) {
		throw new Error(`${tool} failed (install Debian's poppler-utils, as .ci/run does): ${error}`);
	}
};

/** The page as grey pixels, through pdftoppm. */
function rasterize(path: string): Buffer {
	return execFileSync("pdftoppm", ["-r", "72", "-gray", "-singlefile", path]);
}

const SAMPLE_TEXT = [
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz",
	"0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
	"Invoice INV-000042 · Amount due USD 1,882.30 — Müller & Søn, €, ¥, fi ffi",
];

async function sampleDocument(subset: boolean): Promise<Uint8Array> {
	const doc = await PDFDocument.create();
	// Fixed dates, so that two documents can be compared byte for byte.
	doc.setCreationDate(new Date("2026-11-01T00:00:00Z"));
	doc.setModificationDate(new Date("2026-11-01T00:00:00Z"));
	doc.registerFontkit(subset ? subsettingFontkit : fontkit);
	const regular = await doc.embedFont(fonts.regular, { subset });
	const bold = await doc.embedFont(fonts.bold, { subset });
	const page = doc.addPage([595, 300]);
	SAMPLE_TEXT.forEach((line, i) => {
		page.drawText(line, { x: 20, y: 260 - i * 40, size: 13, font: regular });
		page.drawText(line, { x: 20, y: 240 - i * 40, size: 13, font: bold });
	});
	if (subset) tagSubsetFonts([regular, bold]);
	return doc.save({ useObjectStreams: false });
}

describe("subset fonts", { timeout: 60_000 }, () => {
	it("draw exactly what the whole fonts draw", async () => {
		const whole = await sampleDocument(false);
		const subset = await sampleDocument(true);
		expect(subset.length).toBeLessThan(whole.length / 5);
		const wholePixels = rasterize(saved(whole, "fonts-whole"));
		const subsetPixels = rasterize(saved(subset, "fonts-subset"));
		expect(subsetPixels.equals(wholePixels)).toBe(true);
	});

	it("are listed by pdffonts as embedded subsets named ABCDEF+Name, their text extractable", async () => {
		const path = saved(await sampleDocument(true), "fonts-subset-listed");
		const rows = poppler("pdffonts", [path]).trim().split("\n").slice(2);
		const names = rows.map((row) => row.split(/\s+/)[0] as string);
		expect(names.sort((a, b) => a.slice(7).localeCompare(b.slice(7)))).toEqual([
			expect.stringMatching(/^[A-Z]{6}\+Inter-Regular$/),
			expect.stringMatching(/^[A-Z]{6}\+Inter-SemiBold$/),
		]);
		for (const row of rows) {
			// name, type, encoding, then emb, sub, uni: all yes.
			expect(row, row).toMatch(/^[A-Z]{6}\+\S+\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes\s/);
		}
		const text = poppler("pdftotext", [path, "-"]);
		for (const line of SAMPLE_TEXT) expect(text).toContain(line);
	});

	it("get a tag from their glyphs: the same document gives the same bytes", async () => {
		expect(subsetTag("Inter-Regular", [0, 5, 9])).toMatch(/^[A-Z]{6}$/);
		expect(subsetTag("Inter-Regular", [0, 5, 9])).toBe(subsetTag("Inter-Regular", [0, 5, 9]));
		expect(subsetTag("Inter-Regular", [0, 5, 9])).not.toBe(subsetTag("Inter-Regular", [0, 5, 10]));
		const first = await sampleDocument(true);
		const second = await sampleDocument(true);
		expect(Buffer.from(first).equals(Buffer.from(second))).toBe(true);
	});
});
