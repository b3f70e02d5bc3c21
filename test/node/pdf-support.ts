/**
 * What the PDF tests share: the font files the Worker bundles (src/documents/fonts.ts; tests run from the
 * project's root), and reading a document back as a customer's tools do, with pdftotext (Debian's poppler-utils,
 * installed by .ci/run).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

export const fonts = {
	regular: readFileSync("node_modules/@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf"),
	bold: readFileSync("node_modules/@expo-google-fonts/inter/600SemiBold/Inter_600SemiBold.ttf"),
};

/**
 * The text as pdftotext extracts it, by default keeping the layout, or with `reading: true` in reading order. The
 * document is kept as test-results/<name>.pdf to look at when a test fails.
 */
export function pdfText(bytes: Uint8Array, name: string, { reading = false } = {}): string {
	mkdirSync("test-results", { recursive: true });
	const path = `test-results/${name}.pdf`;
	writeFileSync(path, bytes);
	try {
		return execFileSync("pdftotext", [...(reading ? [] : ["-layout"]), path, "-"], { encoding: "utf8" });
	} catch (error) {
		throw new Error(`pdftotext failed (install Debian's poppler-utils, as .ci/run does): ${error}`);
	}
}
