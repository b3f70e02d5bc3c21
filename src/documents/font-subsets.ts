/**
 * Embedding only the glyphs a document uses. Inter goes in whole at ~340 KB a weight; an invoice uses a few dozen
 * glyphs, so its fonts are subset: a one-page invoice is then some 20 KB instead of 430 KB, and the CPU spent
 * compressing the fonts goes with the bytes.
 *
 * Two things are added to what pdf-lib and @pdf-lib/fontkit do:
 * - fontkit's TrueType subsetter writes the glyph records back to back and then, when the table is small, a short
 *   `loca` table, which stores offsets halved: a record of odd length shifts every glyph after it, and most of
 *   the page then renders blank (the text layer survives). Each record is padded to an even length here.
 * - PDF names a subset font `ABCDEF+PostScriptName`, six upper-case letters and a plus (ISO 32000-1, 9.6.4), so
 *   that readers know the font is incomplete; pdf-lib names it `PostScriptName-1234` instead. The tag is set here,
 *   derived from the glyphs in the subset, so the same invoice always renders to the same bytes.
 */
import fontkit from "@pdf-lib/fontkit";
import type { PDFDocument, PDFFont } from "pdf-lib";
import { sha256Hex } from "../lib/sha256";

type Fontkit = Parameters<PDFDocument["registerFontkit"]>[0];

/** What this module touches of fontkit's TrueType subset (private to fontkit). */
interface TrueTypeSubset {
	_addGlyph?: (gid: number) => number;
	glyf: Uint8Array[];
	offset: number;
}

interface BufferClass {
	alloc(size: number): Uint8Array;
}

function padGlyphRecords(subset: TrueTypeSubset): void {
	const addGlyph = subset._addGlyph;
	if (!addGlyph) return; // a CFF font: no glyf and loca tables
	subset._addGlyph = function (this: TrueTypeSubset, gid: number) {
		const index = addGlyph.call(this, gid);
		const record = this.glyf[index];
		if (record && record.length % 2 === 1) {
			// The same kind of buffer as fontkit's own (its bundled Buffer), which its encoder insists on.
			const padded = (record.constructor as unknown as BufferClass).alloc(record.length + 1);
			padded.set(record);
			this.glyf[index] = padded;
			this.offset += 1;
		}
		return index;
	};
}

type Font = ReturnType<Fontkit["create"]>;

// A parsed font is kept for the isolate's life, keyed by the bytes it was read from (the Worker's font modules
// are the same ArrayBuffer on every request): fontkit reads its tables lazily and its layout engine warms up,
// so a document after the first skips that work. Documents only read a font; each takes its own subset.
const parsedFonts = new WeakMap<ArrayBufferLike, Font>();

function parse(buffer: Uint8Array, postscriptName?: string): Font {
	const font = fontkit.create(buffer, postscriptName);
	const createSubset = font.createSubset.bind(font);
	font.createSubset = () => {
		const subset = createSubset();
		padGlyphRecords(subset as unknown as TrueTypeSubset);
		return subset;
	};
	return font;
}

/** fontkit, whose TrueType subsets keep every glyph. Register it with `doc.registerFontkit`. */
export const subsettingFontkit: Fontkit = {
	create(buffer, postscriptName) {
		const whole = buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength;
		if (!whole || postscriptName !== undefined) return parse(buffer, postscriptName);
		let font = parsedFonts.get(buffer.buffer);
		if (!font) {
			font = parse(buffer);
			parsedFonts.set(buffer.buffer, font);
		}
		return font;
	},
};

/** What this module touches of pdf-lib's embedder of a subset font (private to pdf-lib). */
interface SubsetEmbedder {
	fontName: string;
	customName?: string;
	subset?: { glyphs: number[] };
}

/** Six upper-case letters from the glyph ids of the subset and the font's name. */
export function subsetTag(fontName: string, glyphIds: readonly number[]): string {
	const hash = sha256Hex(`${fontName}:${glyphIds.join(",")}`);
	let tag = "";
	for (let i = 0; i < 6; i++)
		tag += String.fromCharCode(65 + (Number.parseInt(hash.slice(i * 4, i * 4 + 4), 16) % 26));
	return tag;
}

/**
 * Names each subset font `ABCDEF+Name` before it is written. Call it after the last text is drawn, right before
 * `doc.save()`: the tag depends on every glyph used.
 */
export function tagSubsetFonts(fonts: readonly PDFFont[]): void {
	for (const font of fonts) {
		const embedder = (font as unknown as { embedder: SubsetEmbedder }).embedder;
		if (!embedder.subset) continue;
		embedder.customName = `${subsetTag(embedder.fontName, embedder.subset.glyphs)}+${embedder.fontName}`;
	}
}
