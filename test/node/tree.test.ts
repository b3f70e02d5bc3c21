/// <reference types="node" />
/**
 * The tree stays easy to find one's way in: no file of src/ is over 400 lines (a longer one holds two things),
 * and nothing is named after a stage of the project (a "wave", a "phase", the "third" one): files, npm scripts and
 * tests are named by their topic, which outlives the plan that made them.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const MAX_LINES = 400;

/** The files git tracks, and the new ones it does not ignore. */
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
	cwd: root,
	encoding: "utf8",
})
	.split("\n")
	.filter((path) => path !== "")
	.filter((path, index, all) => all.indexOf(path) === index);
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** A stage of the project rather than a topic: wave2, second-wave, "the third wave", phase 1, round 3. */
const PHASE = /wave|phase|\bround[-_ ]?\d/i;
/** The names a test file gives its tests and groups: describe("…"), it("…"), test.each(…)("…"). */
const TEST_NAME = /\b(?:describe|it|test)(?:\.\w+)*(?:\([^()]*\))?\(\s*(["'`])((?:(?!\1).)*)\1/g;

function linesOver(text: string, max: number): number | null {
	const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
	return lines > max ? lines : null;
}

function testNames(text: string): string[] {
	return [...text.matchAll(TEST_NAME)].map((match) => match[2] as string);
}

describe("the tree", () => {
	it("reads the files git tracks", () => {
		expect(files).toContain("src/index.ts");
		expect(files.length).toBeGreaterThan(300);
	});

	it(`has no source file in src/ over ${MAX_LINES} lines`, () => {
		const long = files
			.filter((path) => path.startsWith("src/") && /\.(ts|js|mjs)$/.test(path))
			.flatMap((path) => {
				const lines = linesOver(read(path), MAX_LINES);
				return lines === null ? [] : [`${path}: ${lines} lines`];
			});
		expect(long, long.join("\n")).toEqual([]);
	});

	it("names no file or folder after a stage of the project", () => {
		const named = files.filter((path) => PHASE.test(path));
		expect(named, named.join("\n")).toEqual([]);
	});

	it("names no npm script after a stage of the project, nor runs a file so named", () => {
		const scripts: Record<string, string> = JSON.parse(read("package.json")).scripts;
		const named = Object.entries(scripts)
			.filter(([name, command]) => PHASE.test(name) || PHASE.test(command))
			.map(([name, command]) => `${name}: ${command}`);
		expect(named, named.join("\n")).toEqual([]);
	});

	it("names no test or group of tests after a stage of the project", () => {
		const named = files
			.filter((path) => /(^|\/)test\//.test(path) && /\.(ts|mjs|js)$/.test(path))
			.flatMap((path) =>
				testNames(read(path))
					.filter((name) => PHASE.test(name))
					.map((name) => `${path}: ${name}`),
			);
		expect(named, named.join("\n")).toEqual([]);
	});

	it("keeps the stages of the project out of code and comments", () => {
		const named = files
			.filter((path) => /\.(ts|tsx|mjs|js|sh)$/.test(path) && path !== "test/node/tree.test.ts")
			.filter((path) => /^(src|test|console\/src|scripts|sdk)\//.test(path))
			.flatMap((path) =>
				read(path)
					.split("\n")
					.flatMap((line, index) => (/\bwaves?\b|wave-\d/i.test(line) ? [`${path}:${index + 1}`] : [])),
			);
		expect(named, named.join("\n")).toEqual([]);
	});
});

describe("the checks themselves", () => {
	it("count lines as an editor does", () => {
		expect(linesOver(`${"x\n".repeat(400)}`, 400)).toBeNull();
		expect(linesOver(`${"x\n".repeat(401)}`, 400)).toBe(401);
		expect(linesOver(`${"x\n".repeat(400)}x`, 400)).toBe(401);
	});

	it("find a stage's name and leave topics alone", () => {
		for (const name of ["wave2.mjs", "third-wave.test.ts", "test:console:wave2", "the second wave's pages"])
			expect(PHASE.test(name), name).toBe(true);
		for (const name of ["rounding.test.ts", "the first part", "money-pages.mjs", "a third of the rounds"])
			expect(PHASE.test(name), name).toBe(false);
	});

	it("read the names of tests", () => {
		const text = `describe("a group", () => {\n\tit.each([1, 2])("case %s", () => {});\n\ttest('plain', () => {});\n});`;
		expect(testNames(text)).toEqual(["a group", "case %s", "plain"]);
	});
});
