/**
 * The text of a PDF, read inside the Workers runtime where pdftotext cannot run: pdf-lib parses the document, each
 * font's ToUnicode map turns the shown glyph codes back into characters, and the pieces are put into lines by
 * their position on the page (top to bottom, left to right, pieces joined by one space). Enough to find a label and
 * its figure on one line, as a reader of the page would; not a layout engine.
 */
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef } from "pdf-lib";

type Piece = { x: number; y: number; text: string };
type Decoder = (hex: string) => string;

const hexToBytes = (hex: string) => {
	const clean = hex.replace(/\s+/g, "");
	const out: number[] = [];
	for (let i = 0; i < clean.length; i += 2)
		out.push(Number.parseInt(clean.slice(i, i + 2).padEnd(2, "0"), 16));
	return out;
};

const utf16 = (hex: string) => {
	const bytes = hexToBytes(hex);
	const units: number[] = [];
	for (let i = 0; i + 1 < bytes.length; i += 2)
		units.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
	return String.fromCharCode(...units);
};

function streamText(doc: PDFDocument, object: unknown): string {
	const resolved = object instanceof PDFRef ? doc.context.lookup(object) : object;
	if (resolved instanceof PDFRawStream) {
		return new TextDecoder("latin1").decode(decodePDFRawStream(resolved).decode());
	}
	if (resolved instanceof PDFArray) {
		return resolved
			.asArray()
			.map((item) => streamText(doc, item))
			.join("\n");
	}
	return "";
}

/** A font's decoder: its ToUnicode map (2-byte codes) when it has one, else one Latin-1 byte per code. */
function fontDecoder(doc: PDFDocument, font: PDFDict): Decoder {
	const toUnicode = font.get(PDFName.of("ToUnicode"));
	if (!toUnicode) return (hex) => String.fromCharCode(...hexToBytes(hex));
	const cmap = streamText(doc, toUnicode);
	const map = new Map<number, string>();
	for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
		for (const [, code, uni] of (block[1] as string).matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>/g)) {
			map.set(Number.parseInt(code as string, 16), utf16(uni as string));
		}
	}
	for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
		const body = block[1] as string;
		for (const [, lo, hi, rest] of body.matchAll(
			/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(<[0-9a-fA-F]+>|\[[^\]]*\])/g,
		)) {
			const start = Number.parseInt(lo as string, 16);
			const end = Number.parseInt(hi as string, 16);
			if ((rest as string).startsWith("[")) {
				const items = [...(rest as string).matchAll(/<([0-9a-fA-F]+)>/g)].map((m) => utf16(m[1] as string));
				for (const [i, text] of items.entries()) map.set(start + i, text);
			} else {
				const base = utf16((rest as string).slice(1, -1));
				const last = base.charCodeAt(base.length - 1);
				for (let code = start; code <= end; code++) {
					map.set(code, base.slice(0, -1) + String.fromCharCode(last + code - start));
				}
			}
		}
	}
	return (hex) => {
		const bytes = hexToBytes(hex);
		let out = "";
		for (let i = 0; i + 1 < bytes.length; i += 2) {
			out += map.get(((bytes[i] as number) << 8) | (bytes[i + 1] as number)) ?? "\uFFFD";
		}
		return out;
	};
}

const literalToHex = (literal: string) => {
	const unescaped = literal
		.replace(/\\([0-7]{1,3})/g, (_, oct) => String.fromCharCode(Number.parseInt(oct, 8)))
		.replace(/\\(.)/g, (_, ch) => ({ n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" })[ch as "n"] ?? ch);
	return [...unescaped].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
};

const TOKEN = /<[0-9a-fA-F\s]*>|\((?:\\.|[^\\)])*\)|\[|\]|\/[^\s/[\]()<>]+|[-+]?\d*\.?\d+|[A-Za-z'"*]+/g;

function pageText(contents: string, fonts: Map<string, Decoder>): Piece[] {
	const pieces: Piece[] = [];
	const stack: string[] = [];
	let decode: Decoder = (hex) => String.fromCharCode(...hexToBytes(hex));
	let x = 0;
	let y = 0;
	let lineX = 0;
	let lineY = 0;
	let leading = 0;
	let array: string[] | null = null;
	const show = (strings: string[]) => {
		const text = strings.map((s) => decode(s)).join("");
		if (text.trim()) pieces.push({ x, y, text });
	};
	const hexOf = (token: string) =>
		token.startsWith("<") ? token.slice(1, -1) : literalToHex(token.slice(1, -1));
	for (const match of contents.matchAll(TOKEN)) {
		const token = match[0];
		if (token === "[") {
			array = [];
			continue;
		}
		if (token === "]") {
			stack.push("__array__");
			continue;
		}
		if (array && (token.startsWith("<") || token.startsWith("("))) {
			array.push(hexOf(token));
			continue;
		}
		if (array && /^[-+]?\d*\.?\d+$/.test(token)) continue;
		if (!/^[A-Za-z'"*]+$/.test(token)) {
			stack.push(token);
			continue;
		}
		const args = stack.splice(0);
		const num = (i: number) => Number(args[args.length - i]);
		switch (token) {
			case "BT":
				x = lineX = 0;
				y = lineY = 0;
				break;
			case "Tf": {
				const name = (args[args.length - 2] ?? "").slice(1);
				decode = fonts.get(name) ?? decode;
				break;
			}
			case "Tm":
				x = lineX = num(2);
				y = lineY = num(1);
				break;
			case "Td":
			case "TD":
				if (token === "TD") leading = -num(1);
				lineX += num(2);
				lineY += num(1);
				x = lineX;
				y = lineY;
				break;
			case "TL":
				leading = num(1);
				break;
			case "T*":
				lineY -= leading;
				x = lineX;
				y = lineY;
				break;
			case "Tj":
			case "'":
			case '"':
				if (token !== "Tj") {
					lineY -= leading;
					x = lineX;
					y = lineY;
				}
				show([hexOf(args[args.length - 1] ?? "<>")]);
				break;
			case "TJ":
				show(array ?? []);
				array = null;
				break;
			default:
				array = null;
		}
	}
	return pieces;
}

/** The document's text, one line per row of text on each page, pages in order. */
export async function pdfLines(bytes: Uint8Array): Promise<string[]> {
	const doc = await PDFDocument.load(bytes, { updateMetadata: false });
	const lines: string[] = [];
	for (const page of doc.getPages()) {
		const fonts = new Map<string, Decoder>();
		const fontDict = page.node.Resources()?.lookupMaybe(PDFName.of("Font"), PDFDict);
		for (const [name, ref] of fontDict?.entries() ?? []) {
			const font = doc.context.lookup(ref);
			if (font instanceof PDFDict) fonts.set(name.asString().slice(1), fontDecoder(doc, font));
		}
		const pieces = pageText(streamText(doc, page.node.get(PDFName.of("Contents"))), fonts);
		const rows = new Map<number, Piece[]>();
		for (const piece of pieces) {
			const key = Math.round(piece.y);
			rows.set(key, [...(rows.get(key) ?? []), piece]);
		}
		for (const key of [...rows.keys()].sort((a, b) => b - a)) {
			const row = (rows.get(key) as Piece[]).sort((a, b) => a.x - b.x);
			lines.push(
				row
					.map((p) => p.text)
					.join(" ")
					.replace(/\s+/g, " ")
					.trim(),
			);
		}
	}
	return lines;
}
