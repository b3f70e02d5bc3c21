// Builds the Worker into dist/worker as ES modules that a new isolate loads one by one (docs/scaling.md#cold-start).
// wrangler's own bundler writes one module, lazy code included, which every new isolate parses before it answers;
// split here, what src/index.ts imports with import() (the whole app, PDFs and their fonts, MCP, the OpenAPI
// document, the queue and cron jobs) is a module of its own, parsed on its first import. wrangler.toml's `main`
// is dist/worker/index.js with `no_bundle`, and its [build] runs this on `wrangler dev`, `deploy` and
// `check startup`. The tests run the sources (vitest.config.ts names src/index.ts).

import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const OUTDIR = join(root, "dist", "worker");
/** esbuild's account of the build (which inputs each module holds, and its imports), for the bench's startup rows. */
export const METAFILE = join(root, "dist", "worker-meta.json");

/** A .ttf stays a module of its own, a "Data" module as wrangler.toml's rules say, copied beside the chunks. */
const fontsAsDataModules = (outdir) => ({
	name: "fonts-as-data-modules",
	setup(b) {
		b.onResolve({ filter: /\.ttf$/ }, async (args) => {
			if (args.pluginData === "fonts") return undefined;
			const resolved = await b.resolve(args.path, {
				kind: args.kind,
				resolveDir: args.resolveDir,
				pluginData: "fonts",
			});
			if (resolved.errors.length > 0) return { errors: resolved.errors };
			copyFileSync(resolved.path, join(outdir, basename(resolved.path)));
			return { path: `./${basename(resolved.path)}`, external: true };
		});
	},
});

/** Writes the modules into `outdir` (emptied first) and esbuild's metafile to `metafile`; answers esbuild's result. */
export async function buildWorker({ outdir = OUTDIR, metafile = METAFILE, quiet = false } = {}) {
	const started = Date.now();
	rmSync(outdir, { recursive: true, force: true });
	mkdirSync(outdir, { recursive: true });
	const result = await build({
		absWorkingDir: root,
		entryPoints: ["src/index.ts"],
		outdir,
		bundle: true,
		splitting: true,
		format: "esm",
		platform: "neutral",
		target: "es2024",
		// As wrangler resolves packages for workerd; node:* and cloudflare:* are the runtime's own modules.
		conditions: ["workerd", "worker", "browser"],
		mainFields: ["module", "main"],
		external: ["node:*", "cloudflare:*"],
		chunkNames: "[name]-[hash]",
		// .mjs, all in one folder: wrangler.toml's rule for ES modules names "*.mjs" only (see there).
		outExtension: { ".js": ".mjs" },
		minify: true,
		keepNames: true,
		sourcemap: "linked",
		metafile: true,
		logLevel: "warning",
		plugins: [fontsAsDataModules(outdir)],
	});
	writeFileSync(metafile, JSON.stringify(result.metafile));
	if (!quiet) {
		const modules = Object.keys(result.metafile.outputs).filter((path) => path.endsWith(".mjs")).length;
		console.log(`Built the Worker into ${outdir}: ${modules} modules in ${Date.now() - started} ms`);
	}
	return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWorker();
