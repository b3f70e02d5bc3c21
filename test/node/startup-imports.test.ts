/// <reference types="node" />
/**
 * What a new isolate evaluates before it answers: the modules src/index.ts imports statically, directly or not.
 * The Worker is bundled as wrangler bundles it (esbuild, one ES module); a module reached only through a dynamic
 * `import()` is wrapped by esbuild and runs when that import first runs, so the static closure of the entry is
 * exactly what the global scope runs. Ingest and usage must answer from it alone: PDFs, MCP, the OpenAPI document,
 * the docs page, the other routes and the queue and cron jobs stay out, and so do drizzle and the table
 * definitions, the accumulator's implementation (its class is exported, its parts are imported by its first
 * instance) and node:zlib (docs/scaling.md#cold-start).
 */
import { build, type Metafile } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";

let meta: Metafile;

beforeAll(async () => {
	const result = await build({
		entryPoints: ["src/index.ts"],
		bundle: true,
		write: false,
		outdir: "out",
		format: "esm",
		platform: "neutral",
		conditions: ["workerd", "worker", "browser"],
		mainFields: ["module", "main"],
		external: ["node:*", "cloudflare:*"],
		loader: { ".ttf": "binary" },
		metafile: true,
		logLevel: "silent",
	});
	meta = result.metafile;
}, 60_000);

/** Every input the entry reaches by static imports (and requires), following neither dynamic imports nor externals. */
function staticClosure(entry: string): Set<string> {
	const seen = new Set([entry]);
	const pending = [entry];
	while (pending.length > 0) {
		const path = pending.pop() as string;
		for (const edge of meta.inputs[path]?.imports ?? []) {
			if (edge.kind === "dynamic-import" || edge.external || seen.has(edge.path)) continue;
			seen.add(edge.path);
			pending.push(edge.path);
		}
	}
	return seen;
}

describe("what a new isolate evaluates", () => {
	it("the ingest and usage routes, without PDFs, MCP, the document, the other routes or the jobs", () => {
		const startup = [...staticClosure("src/index.ts")];
		const reached = (pattern: RegExp) => startup.filter((path) => pattern.test(path));

		// The events' fast path and the middlewares of /v1; the route modules (their zod schemas) on first need.
		expect(reached(/^src\/metering\/(ingest-routes|fast-validation|event-records)\.ts$/)).toHaveLength(3);
		expect(reached(/^src\/ingest-app\.ts$/)).toHaveLength(1);
		expect(reached(/^src\/http\/gate\.ts$/)).toHaveLength(1);
		for (const lazy of [
			// zod and what builds schemas with it: a plain event is answered without them.
			/node_modules\/zod\//,
			/node_modules\/@hono\/zod-/,
			/node_modules\/@asteasolutions\//,
			/^src\/metering\/(routes|usage-routes|events)\.ts$/,
			/^src\/http\/(router|errors|health)\.ts$/,
			/node_modules\/pdf-lib\//,
			/node_modules\/@pdf-lib\//,
			/\.ttf$/,
			/node_modules\/ajv/,
			/node_modules\/@modelcontextprotocol\//,
			// Stripe's SDK: only collecting a payment needs it (import it where it is used, with import()).
			/node_modules\/stripe\//,
			/^src\/app\.ts$/,
			/^src\/documents\/(invoice-pdf|credit-note-pdf|font-subsets|fonts)\.ts$/,
			/^src\/mcp\/(routes|server|tools|call)\.ts$/,
			/^src\/http\/(openapi-document|openapi-examples|openapi-headers|docs)\.ts$/,
			/^src\/webhooks\/(openapi|consumer|sweep)\.ts$/,
			/^src\/invoicing\/(monthly|finalize|routes)\.ts$/,
			// Every other route file: of the routes, the ingest app mounts only the events' fast path.
			/^src\/(?!metering\/ingest-routes|http\/bench-routes)[a-z-]+\/([a-z-]+-)?routes\.ts$/,
			// drizzle and the tables: a cached key and a cached placement need no D1 read; a miss loads them.
			/node_modules\/drizzle-orm\//,
			/^src\/db\/(schema|client)(\/|\.ts$)/,
			/^src\/agents\/instances\.ts$/,
			/^src\/audit\/(record|write)\.ts$/,
			/^src\/http\/idempotency-claim\.ts$/,
			/^src\/webhooks\/(dispatch|outbox)\.ts$/,
			// The accumulator's parts and storage, and the model price catalog they read.
			/^src\/durable-objects\/usage-accumulator\/(parts|storage)\//,
			/^src\/model-costs\/catalog-data\.ts$/,
		]) {
			expect(reached(lazy), String(lazy)).toEqual([]);
		}
	});

	it("loads neither node:zlib (the archive) nor node:crypto (hashing keys) at startup", () => {
		const runtimeModules = [...staticClosure("src/index.ts")].flatMap((path) =>
			(meta.inputs[path]?.imports ?? [])
				.filter((edge) => edge.external && edge.kind === "import-statement")
				.map((edge) => edge.path),
		);
		expect(runtimeModules).not.toContain("node:zlib");
		// node:crypto loads the runtime's Node streams and buffers: SHA-256 is imported by the first key lookup.
		expect(runtimeModules).not.toContain("node:crypto");
		expect(runtimeModules).toContain("cloudflare:workers");
	});

	it("the lazy parts are still in the bundle, behind dynamic imports", () => {
		const all = Object.keys(meta.inputs);
		for (const lazy of [
			/node_modules\/pdf-lib\//,
			/node_modules\/@modelcontextprotocol\//,
			/^src\/app\.ts$/,
			/node_modules\/drizzle-orm\//,
			/^src\/durable-objects\/usage-accumulator\/parts\/index\.ts$/,
		]) {
			expect(
				all.some((path) => lazy.test(path)),
				String(lazy),
			).toBe(true);
		}
	});
});
