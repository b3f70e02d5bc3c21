/// <reference types="node" />
/**
 * The README, CONTRIBUTING and every docs page stay readable on GitHub: every code fence closes, and none opens
 * inside another (a longer fence once swallowed a whole section of the README); every relative link points to a
 * file that exists, and every `#anchor` to a heading of the page it names (GitHub's slugs); no page cites a document
 * outside the repository; the README stays short enough to read, the depth being in docs/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const pages = [
	"README.md",
	"CONTRIBUTING.md",
	...readdirSync(join(root, "docs"))
		.filter((name) => name.endsWith(".md"))
		.map((name) => `docs/${name}`),
];
const read = (page: string) => readFileSync(join(root, page), "utf8");

interface Fence {
	char: string;
	length: number;
	line: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Fence problems of a Markdown text, and its lines outside code blocks (code blocks blanked, numbering kept). */
function scanFences(text: string): { problems: string[]; prose: string[] } {
	const problems: string[] = [];
	const prose: string[] = [];
	let open: Fence | null = null;
	text.split("\n").forEach((raw, index) => {
		// Fences may sit in list items: judge them without the item's indentation.
		const line = raw.replace(/^\s+/, (indent) => (indent.length > 3 ? indent.slice(indent.length - 3) : ""));
		const fence = FENCE.exec(line);
		const number = index + 1;
		if (!open) {
			if (fence?.[1]) {
				open = { char: fence[1][0] as string, length: fence[1].length, line: number };
				prose.push("");
			} else {
				prose.push(raw);
			}
			return;
		}
		prose.push("");
		if (!fence?.[1] || fence[1][0] !== open.char) return;
		const info = (fence[2] ?? "").trim();
		if (info === "" && fence[1].length >= open.length) {
			open = null;
			return;
		}
		// A fence line that does not close the block: either one written to open a block inside it (the outer fence
		// then swallows what follows), or a close that is too short for its opener.
		problems.push(
			`line ${number}: a fence (${fence[1]}${info}) inside the block opened at line ${open.line} (${open.char.repeat(open.length)})`,
		);
	});
	if (open) {
		const unclosed = open as Fence;
		problems.push(`line ${unclosed.line}: a code block opened here is never closed`);
	}
	return { problems, prose };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens (github-slugger). */
function slug(heading: string): string {
	const text = heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
		.replace(/<[^>]+>/g, "")
		.replace(/[`*]/g, "");
	return text
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
		.replace(/ /g, "-");
}

/** Every anchor a page has: its headings' slugs, a repeated slug numbered as GitHub numbers it. */
function anchorsOf(page: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	for (const line of scanFences(read(page)).prose) {
		const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (!heading?.[1]) continue;
		const base = slug(heading[1]);
		const count = seen.get(base) ?? 0;
		seen.set(base, count + 1);
		anchors.add(count === 0 ? base : `${base}-${count}`);
	}
	return anchors;
}

/** The link targets of a page's prose (Markdown links and images, HTML src and href), with their line. */
function linksOf(page: string): { target: string; line: number }[] {
	const links: { target: string; line: number }[] = [];
	scanFences(read(page)).prose.forEach((raw, index) => {
		const line = raw.replace(/(`+)[^`]*?\1/g, "");
		for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
			links.push({ target: match[1] as string, line: index + 1 });
		}
		for (const match of line.matchAll(/\b(?:src|href)="([^"]+)"/g)) {
			links.push({ target: match[1] as string, line: index + 1 });
		}
	});
	return links;
}

describe("the README and the docs", () => {
	it("finds the pages", () => {
		expect(pages).toEqual(expect.arrayContaining(["README.md", "CONTRIBUTING.md", "docs/scaling.md"]));
		expect(pages.filter((page) => page.startsWith("docs/")).length).toBeGreaterThanOrEqual(6);
	});

	it("keeps the README under 25,000 characters (the depth is in docs/)", () => {
		expect(Buffer.byteLength(read("README.md"), "utf8")).toBeLessThan(25_000);
	});

	it.each(pages)("%s: every code fence closes, and none opens inside another", (page) => {
		expect(scanFences(read(page)).problems).toEqual([]);
	});

	it.each(pages)("%s: every relative link resolves to a file, every #anchor to a heading", (page) => {
		const broken: string[] = [];
		for (const { target, line } of linksOf(page)) {
			if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:…
			const [path = "", anchor] = target.split("#", 2);
			const file = path === "" ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(path));
			const name = relative(root, file);
			if (!existsSync(file)) {
				broken.push(`line ${line}: ${target} (no file ${name})`);
				continue;
			}
			if (anchor === undefined) continue;
			if (!file.endsWith(".md") || statSync(file).isDirectory()) {
				broken.push(`line ${line}: ${target} (an anchor into ${name}, which is not a Markdown page)`);
			} else if (!anchorsOf(name).has(anchor)) {
				broken.push(`line ${line}: ${target} (${name} has no heading with the anchor #${anchor})`);
			}
		}
		expect(broken).toEqual([]);
	});

	it.each(pages)("%s: cites no document outside the repository", (page) => {
		expect(read(page)).not.toMatch(/§|CONTRACT|\.\.\/shared/);
	});
});

describe("the checks themselves", () => {
	it("catch a four-backtick block that swallows the next section, and a block never closed", () => {
		const swallowed = "````python\nx = 1\n\n## Next section\n\n```sh\ncurl …\n````\n";
		expect(scanFences(swallowed).problems).toEqual([
			"line 6: a fence (```sh) inside the block opened at line 1 (````)",
		]);
		expect(scanFences("```sh\ncurl …\n").problems).toEqual([
			"line 1: a code block opened here is never closed",
		]);
		expect(scanFences("```sh\na\n```\n\n  ```json\n  {}\n  ```\n").problems).toEqual([]);
	});

	it("make GitHub's anchors", () => {
		expect(slug("Where exactness ends")).toBe("where-exactness-ends");
		expect(slug("The `Idempotency-Key` header")).toBe("the-idempotency-key-header");
		expect(slug("Billing: customers, subscriptions & credits")).toBe(
			"billing-customers-subscriptions--credits",
		);
		expect(slug("What one request costs locally, and what the ratio measures")).toBe(
			"what-one-request-costs-locally-and-what-the-ratio-measures",
		);
	});
});

/**
 * The folders of src/ a map leaves out: docs/architecture.md names each folder, nested ones included, as `name/`
 * (in its tree or a path); CONTRIBUTING names each top folder as `name` or `src/name/` in code.
 */
function unmapped(folders: string[], architecture: string, contributing: string): string[] {
	return folders.flatMap((folder) => {
		const name = folder.split("/").at(-1) as string;
		return [
			...(new RegExp(`(^|[\\s\`/(])${name}/`, "m").test(architecture)
				? []
				: [`docs/architecture.md: ${folder}/`]),
			...(folder.includes("/") || new RegExp(`\`(src/)?${folder}/?\``).test(contributing)
				? []
				: [`CONTRIBUTING.md: \`${folder}\``]),
		];
	});
}

function foldersUnder(dir: string, prefix = ""): string[] {
	return readdirSync(dir, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.flatMap((entry) => [
			`${prefix}${entry.name}`,
			...foldersUnder(join(dir, entry.name), `${prefix}${entry.name}/`),
		]);
}

describe("the map of src/", () => {
	const folders = foldersUnder(join(root, "src"));
	const architecture = read("docs/architecture.md");
	const contributing = read("CONTRIBUTING.md");

	it("reads the folders of src/", () => {
		expect(folders).toContain("invoicing");
		expect(folders).toContain("durable-objects/usage-accumulator/parts");
		expect(folders.filter((folder) => !folder.includes("/")).length).toBeGreaterThan(20);
	});

	it("names every folder of src/ in docs/architecture.md, and every top one in CONTRIBUTING", () => {
		const missing = unmapped(folders, architecture, contributing);
		expect(missing, missing.join("\n")).toEqual([]);
	});

	it("fails for a folder added without its line", () => {
		expect(unmapped([...folders, "refunds", "payments/paypal"], architecture, contributing)).toEqual([
			"docs/architecture.md: refunds/",
			"CONTRIBUTING.md: `refunds`",
			"docs/architecture.md: payments/paypal/",
		]);
		const tree = "src/\n  invoicing/   invoices\n  durable-objects/\n    rate-limiter/   limits\n";
		expect(unmapped(["invoicing", "durable-objects/rate-limiter"], tree, "`invoicing`")).toEqual([]);
	});
});
