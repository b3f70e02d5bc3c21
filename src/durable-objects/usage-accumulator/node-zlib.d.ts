// The part of the runtime's node:zlib (nodejs_compat, wrangler.toml) that archive.ts uses. The Workers types do
// not declare Node's modules, and Node's own types would bring Node's globals into every file.
declare module "node:zlib" {
	export function gzipSync(data: string | Uint8Array, options?: { level?: number }): Uint8Array;
}
