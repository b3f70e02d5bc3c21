/// <reference types="node" />
/**
 * The layout's arrows point one way: routes → domain verbs → storage and objects → lib. Read from the value imports
 * of src/**\/*.ts (an `import type` carries no code and does not count):
 * - no two folders of src/ import each other's values, directly or round a circle; nor each other's types (a
 *   type-only circle still ties the folders' meanings together: the type moves to where the arrows allow);
 * - only the HTTP edge (src/http/, the apps at the top of src/ (index.ts, app.ts, *-app.ts), route files, a folder's gate.ts, and src/mcp/, the JSON-RPC
 *   transport over the same routes) imports src/http/: a domain verb throws a DomainError and http/ alone turns
 *   its code into a status;
 * - src/lib/ imports nothing of the app, and neither Hono nor zod;
 * - only the edge imports route files: the apps mount them, another route or the MCP transport may share their
 *   request and response schemas, and no domain verb reaches into one for a constant or a schema.
 * A node of the graph is a folder under src/ (durable-objects/<name> each its own), or a file at the top of src/.
 *
 * Inside the usage accumulator, the hot path, the same holds file by file, types included: its floors are
 * identity (names and call types) < storage/ (tables, statements, memories over them) < parts/ (counting,
 * aggregates, metrics, alerts, reservations, adoption, flush, archive…) < the object and the outside's client;
 * a file imports only its own floor or lower, and no two of its files import each other round a circle.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve("src");

interface Import {
	from: string;
	/** The specifier as written. */
	specifier: string;
	/** The file it resolves to, relative to src/, when it is one of ours. */
	target?: string;
	typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sourceFiles(path);
		return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
	});
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
	if (ts.isExportDeclaration(node)) {
		if (node.isTypeOnly) return true;
		const clause = node.exportClause;
		return !!clause && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly);
	}
	const clause = node.importClause;
	if (!clause) return false; // a side-effect import runs code
	if (clause.isTypeOnly) return true;
	if (clause.name) return false;
	const bindings = clause.namedBindings;
	if (!bindings || ts.isNamespaceImport(bindings)) return false;
	return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function importsOf(file: string): Import[] {
	const text = readFileSync(file, "utf8");
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
	const from = relative(SRC, file);
	const out: Import[] = [];
	const add = (specifier: string, typeOnly: boolean) => {
		let target: string | undefined;
		if (specifier.startsWith("."))
			target = relative(SRC, resolve(dirname(file), specifier)).replace(/\.ts$/, "");
		out.push({ from, specifier, target, typeOnly });
	};
	const visit = (node: ts.Node) => {
		if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
			add((node.moduleSpecifier as ts.StringLiteral).text, isTypeOnly(node));
		} else if (
			ts.isCallExpression(node) &&
			node.expression.kind === ts.SyntaxKind.ImportKeyword &&
			node.arguments[0] &&
			ts.isStringLiteral(node.arguments[0])
		) {
			add(node.arguments[0].text, false);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return out;
}

/** The graph node a file belongs to: its folder under src/ (durable-objects/<name>), or itself at the top. */
function nodeOf(path: string): string {
	const parts = path.replace(/\.ts$/, "").split("/");
	if (parts.length === 1) return parts[0] as string;
	if (parts[0] === "durable-objects" && parts.length > 2) return `${parts[0]}/${parts[1]}`;
	return parts[0] as string;
}

const isRouteFile = (path: string) => /(\/|-)routes(\.ts)?$/.test(path);
/** index.ts, app.ts and the files that assemble apps beside it (assemble-app.ts, ingest-app.ts). */
const isAppFile = (path: string) => /^(index|app|[a-z-]+-app)\.ts$/.test(path);

/** The HTTP edge: what may turn requests into calls and domain errors into statuses. */
function isHttpEdge(path: string): boolean {
	return (
		path.startsWith("http/") ||
		path.startsWith("mcp/") ||
		isAppFile(path) ||
		isRouteFile(path) ||
		/(^|\/)gate\.ts$/.test(path)
	);
}

const describeEdge = (i: Import) => `${i.from} → ${i.specifier}`;

/** Strongly connected components of more than one node (Tarjan). */
function cycles(edges: Map<string, Set<string>>): string[][] {
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const found: string[][] = [];
	let next = 0;
	const connect = (v: string) => {
		index.set(v, next);
		low.set(v, next);
		next++;
		stack.push(v);
		onStack.add(v);
		for (const w of edges.get(v) ?? []) {
			if (!index.has(w)) {
				connect(w);
				low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
			} else if (onStack.has(w)) {
				low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
			}
		}
		if (low.get(v) === index.get(v)) {
			const component: string[] = [];
			let w: string;
			do {
				w = stack.pop() as string;
				onStack.delete(w);
				component.push(w);
			} while (w !== v);
			if (component.length > 1) found.push(component.sort());
		}
	};
	for (const v of [...edges.keys()].sort()) if (!index.has(v)) connect(v);
	return found;
}

/** The folder cycles of these imports, each with the arrows that close it (empty when there is none). */
function folderCycles(of: Import[]): string[] {
	const edges = new Map<string, Set<string>>();
	const why = new Map<string, Import[]>();
	for (const i of of) {
		if (i.target === undefined) continue;
		const a = nodeOf(i.from);
		const b = nodeOf(i.target);
		if (a === b) continue;
		if (!edges.has(a)) edges.set(a, new Set());
		edges.get(a)?.add(b);
		const key = `${a} ${b}`;
		why.set(key, [...(why.get(key) ?? []), i]);
	}
	return cycles(edges).map((component) => {
		const inside = new Set(component);
		const lines = component.flatMap((a) =>
			[...(edges.get(a) ?? [])]
				.filter((b) => inside.has(b))
				.flatMap((b) => (why.get(`${a} ${b}`) ?? []).map((i) => `  ${a} → ${b}: ${describeEdge(i)}`)),
		);
		return `cycle ${component.join(" ↔ ")}\n${lines.join("\n")}`;
	});
}

const imports = sourceFiles(SRC).flatMap(importsOf);

const ACCUMULATOR = "durable-objects/usage-accumulator/";
/** The accumulator's floors, bottom first: a file's floor is its subfolder, or its own name at the top. */
const FLOORS: readonly (readonly string[])[] = [
	["identity", "types", "wire", "step-failure"],
	["storage/"],
	["parts/"],
	["object", "handle", "interface", "placement"],
];

function floorOf(path: string): number {
	const inner = path.slice(ACCUMULATOR.length).replace(/\.ts$/, "");
	const floor = FLOORS.findIndex((names) =>
		names.some((name) => (name.endsWith("/") ? inner.startsWith(name) : inner === name)),
	);
	if (floor === -1) throw new Error(`${path} is on no floor of the accumulator: add it to FLOORS`);
	return floor;
}

const inAccumulator = imports.filter(
	(i) => i.from.startsWith(ACCUMULATOR) && i.target?.startsWith(ACCUMULATOR),
);
const values = imports.filter((i) => !i.typeOnly);

describe("the import graph of src/", () => {
	it("reads the files it checks", () => {
		expect(imports.length).toBeGreaterThan(100);
		expect(values.some((i) => i.from === "app.ts" && i.target === "http/router")).toBe(true);
	});

	it("has no cycle between folders (value imports)", () => {
		const offending = folderCycles(values);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("has no cycle between folders, type imports included", () => {
		const offending = folderCycles(imports);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("lets only the HTTP edge import src/http/ (types too)", () => {
		const offending = imports
			.filter((i) => i.target?.startsWith("http/") && !isHttpEdge(i.from))
			.map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("keeps src/lib/ free of the app, Hono and zod", () => {
		const offending = imports
			.filter((i) => i.from.startsWith("lib/"))
			.filter((i) =>
				i.target !== undefined
					? !i.target.startsWith("lib/")
					: /^(hono(\/|$)|@hono\/|zod(\/|$))/.test(i.specifier),
			)
			.map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("lets only the edge import route files", () => {
		const offending = values
			.filter(
				(i) =>
					i.target !== undefined &&
					isRouteFile(i.target) &&
					!(isAppFile(i.from) || isRouteFile(i.from) || i.from.startsWith("mcp/")),
			)
			.map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("keeps the usage accumulator's floors: each file imports its own floor or lower (types too)", () => {
		expect(inAccumulator.length).toBeGreaterThan(50);
		const offending = inAccumulator
			.filter((i) => floorOf(`${i.target}.ts`) > floorOf(i.from))
			.map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("keeps env.ts a leaf: the bindings' owners name their types (declaration merging)", () => {
		const offending = imports.filter((i) => i.from === "env.ts").map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});

	it("has no cycle between the usage accumulator's files (types included)", () => {
		const edges = new Map<string, Set<string>>();
		for (const i of inAccumulator) {
			if (!edges.has(i.from)) edges.set(i.from, new Set());
			edges.get(i.from)?.add(`${i.target}.ts`);
		}
		expect(cycles(edges)).toEqual([]);
	});

	it("lets no file of the accumulator but the outside's handle import it", () => {
		const offending = inAccumulator.filter((i) => i.target === `${ACCUMULATOR}handle`).map(describeEdge);
		expect(offending, offending.join("\n")).toEqual([]);
	});
});

describe("the checks themselves", () => {
	it("find a circle of folders drawn by type imports alone, and none where arrows go one way", () => {
		const imported = (from: string, target: string, typeOnly: boolean): Import => ({
			from: `${from}.ts`,
			specifier: `../${target}`,
			target,
			typeOnly,
		});
		const circle = [imported("a/x", "b/y", false), imported("b/y", "a/z", true)];
		expect(folderCycles(circle.filter((i) => !i.typeOnly))).toEqual([]);
		expect(folderCycles(circle)).toEqual(["cycle a ↔ b\n  a → b: a/x.ts → ../b/y\n  b → a: b/y.ts → ../a/z"]);
	});

	it("count `import type` and `import { type … }` as type imports, and a namespace import as values", () => {
		const kinds = (text: string) =>
			ts
				.createSourceFile("x.ts", text, ts.ScriptTarget.Latest)
				.statements.filter(ts.isImportDeclaration)
				.map(isTypeOnly);
		expect(
			kinds('import type { A } from "./a";\nimport { type B } from "./b";\nimport * as C from "./c";'),
		).toEqual([true, true, false]);
	});
});
