/// <reference types="node" />
/**
 * The Worker as it is uploaded (scripts/build-worker.mjs, wrangler.toml's main with no_bundle): ES modules split at
 * every import(), so a new isolate parses the entry and what it imports statically, and nothing else until first
 * use. Checked on the build's own metafile: the modules the entry reaches hold the ingest routes and none of the
 * lazy parts, which are modules of their own; the fonts are Data modules beside them (docs/scaling.md#cold-start).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script of the repository, without type declarations.
import { buildWorker } from "../../scripts/build-worker.mjs";

let dir: string;
let meta: Metafile;

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "split-build-"));
	const result = await buildWorker({
		outdir: join(dir, "worker"),
		metafile: join(dir, "meta.json"),
		quiet: true,
	});
	meta = result.metafile;
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The output modules the entry imports statically, directly or not (what a new isolate parses before it answers). */
function startupModules(): string[] {
	const entry = Object.entries(meta.outputs).find(([, output]) => output.entryPoint === "src/index.ts")?.[0];
	if (!entry) throw new Error("no output for src/index.ts");
	const seen = new Set([entry]);
	const pending = [entry];
	while (pending.length > 0) {
		for (const edge of meta.outputs[pending.pop() as string]?.imports ?? []) {
			if (edge.kind !== "import-statement" || edge.external || seen.has(edge.path)) continue;
			seen.add(edge.path);
			pending.push(edge.path);
		}
	}
	return [...seen];
}

const inputsOf = (outputs: string[]) =>
	outputs.flatMap((path) => Object.keys(meta.outputs[path]?.inputs ?? {}));

describe("the Worker as uploaded", () => {
	it("parses the events' fast path at startup, and neither zod, PDFs, MCP, the document nor the routes", () => {
		const startup = inputsOf(startupModules());
		expect(startup).toContain("src/metering/ingest-routes.ts");
		expect(startup).toContain("src/ingest-app.ts");
		for (const lazy of [
			/node_modules\/zod\//,
			/node_modules\/@hono\/zod-/,
			/^src\/metering\/(routes|usage-routes|events)\.ts$/,
			/node_modules\/pdf-lib\//,
			/node_modules\/@pdf-lib\//,
			/node_modules\/ajv/,
			/node_modules\/@modelcontextprotocol\//,
			/^src\/app\.ts$/,
			/^src\/documents\/(invoice-pdf|fonts)\.ts$/,
			/^src\/mcp\/routes\.ts$/,
			/^src\/http\/(openapi-document|docs)\.ts$/,
			/node_modules\/drizzle-orm\//,
			/^src\/db\/schema\//,
			/^src\/durable-objects\/usage-accumulator\/(parts|storage)\//,
		]) {
			expect(
				startup.filter((path) => lazy.test(path)),
				String(lazy),
			).toEqual([]);
		}
	});

	it("holds the lazy parts in modules of their own, and the fonts as separate files", () => {
		const lazyModules = Object.keys(meta.outputs).filter(
			(path) => path.endsWith(".mjs") && !startupModules().includes(path),
		);
		const lazy = inputsOf(lazyModules);
		expect(lazy.some((path) => path.includes("node_modules/pdf-lib/"))).toBe(true);
		expect(lazy.some((path) => path.includes("node_modules/@modelcontextprotocol/"))).toBe(true);
		expect(lazy).toContain("src/app.ts");
		expect(lazy).toContain("src/durable-objects/usage-accumulator/parts/index.ts");
		expect(lazy.some((path) => path.includes("node_modules/drizzle-orm/"))).toBe(true);
		const files = readdirSync(join(dir, "worker"));
		expect(files).toContain("index.mjs");
		expect(files.filter((name) => name.endsWith(".ttf"))).toEqual([
			"Inter_400Regular.ttf",
			"Inter_600SemiBold.ttf",
		]);
	});
});
