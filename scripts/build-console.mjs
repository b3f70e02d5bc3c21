// Bundles the web console (console/src, TypeScript + Chart.js from node_modules) into one browser module,
// console/public/console/app.js, which Workers static assets serve at /console/app.js, and the customer portal's
// page (console/src/portal) into console/public/portal/app.js, served at /portal/app.js. The output is
// git-ignored; `wrangler dev`/`wrangler deploy` run this through wrangler.toml's [build], `npm test` first thing.

import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

export async function buildConsole({ quiet = false } = {}) {
	const started = Date.now();
	// The console, and the customer portal's page (/portal), which shares its modules but not its shell.
	const bundles = [
		["console/src/main.ts", "console/public/console/app.js"],
		["console/src/portal/main.ts", "console/public/portal/app.js"],
	];
	const results = await Promise.all(
		bundles.map(([entry, outfile]) =>
			build({
				absWorkingDir: root,
				entryPoints: [entry],
				outfile,
				bundle: true,
				format: "esm",
				platform: "browser",
				target: "es2022",
				minify: true,
				sourcemap: "linked",
				legalComments: "eof",
				metafile: true,
				logLevel: "warning",
			}),
		),
	);
	if (!quiet) {
		for (const [i, [, outfile]] of bundles.entries()) {
			const bytes = Object.entries(results[i].metafile.outputs).find(([path]) => path.endsWith("app.js"))?.[1]
				.bytes;
			console.log(`console: built ${outfile} (${bytes} bytes) in ${Date.now() - started} ms`);
		}
	}
	buildDocs({ quiet });
	return results[0];
}

/**
 * The API reference at /docs: Scalar's browser build from the pinned @scalar/api-reference package, copied into
 * the static assets as console/public/docs/scalar.js (git-ignored), so that /docs loads nothing from elsewhere.
 */
export function buildDocs({ quiet = false } = {}) {
	const packageDir = `${root}node_modules/@scalar/api-reference/`;
	const { version } = JSON.parse(readFileSync(`${packageDir}package.json`, "utf8"));
	mkdirSync(`${root}console/public/docs`, { recursive: true });
	const target = `${root}console/public/docs/scalar.js`;
	copyFileSync(`${packageDir}dist/browser/standalone.js`, target);
	if (!quiet)
		console.log(
			`docs: copied @scalar/api-reference ${version} to console/public/docs/scalar.js (${statSync(target).size} bytes)`,
		);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	await buildConsole();
}
