/** How the documents (invoice-pdf.ts, credit-note-pdf.ts) lay out a page: A4, its margins, colours and text helpers. */
import { type PDFFont, type PDFPage, rgb } from "pdf-lib";

export const PAGE = { width: 595.28, height: 841.89 }; // A4 in points
export const MARGIN = 56;
export const INK = rgb(0.11, 0.13, 0.17);
export const MUTED = rgb(0.42, 0.45, 0.5);
export const RULE = rgb(0.86, 0.87, 0.9);
export const BAND = rgb(0.95, 0.96, 0.97);
export const ACCENT = rgb(0.15, 0.33, 0.8);

export interface Pen {
	regular: PDFFont;
	bold: PDFFont;
}

export function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
	const lines: string[] = [];
	let line = "";
	for (const word of text.split(/\s+/)) {
		const candidate = line ? `${line} ${word}` : word;
		if (line && font.widthOfTextAtSize(candidate, size) > width) {
			lines.push(line);
			line = word;
		} else {
			line = candidate;
		}
	}
	if (line) lines.push(line);
	return lines.length > 0 ? lines : [""];
}

export function textRight(
	page: PDFPage,
	text: string,
	right: number,
	y: number,
	font: PDFFont,
	size: number,
	color = INK,
) {
	page.drawText(text, { x: right - font.widthOfTextAtSize(text, size), y, size, font, color });
}
