// The OpenAPI document as GET /v1/openapi.json answers it, taken from the app in Node, without a network or a
// running Worker: the app bundled for Node, Workers-only modules stubbed. The SDK's and the console's generated
// types both come from it (build-sdk.mjs, console-types.mjs).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

export async function openApiDocument() {
	const dir = mkdtempSync(join(tmpdir(), "amb-openapi-"));
	try {
		const outfile = join(dir, "app.mjs");
		await build({
			entryPoints: [join(root, "src/app.ts")],
			outfile,
			bundle: true,
			platform: "node",
			// The Node that runs it: newer targets decode binary imports with Uint8Array.fromBase64, which Node 24 lacks.
			target: "node24",
			format: "esm",
			logLevel: "error",
			alias: { "cloudflare:workers": join(root, "test/node/cloudflare-workers-stub.ts") },
			// Modules wrangler's rules would import as data (fonts for documents, wasm…): loadable, never run here.
			loader: { ".ttf": "binary", ".otf": "binary", ".woff2": "binary", ".wasm": "binary", ".bin": "binary" },
		});
		const { createApp } = await import(pathToFileURL(outfile).href);
		const response = await createApp().request("/v1/openapi.json");
		if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
		return await response.json();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
