// The part of the runtime's node:crypto (nodejs_compat, wrangler.toml) that sha256.ts uses. The Workers types do
// not declare Node's modules, and Node's own types would bring Node's globals into every file.
declare module "node:crypto" {
	interface Hash {
		update(data: string): Hash;
		digest(encoding: "hex"): string;
	}
	export function createHash(algorithm: "sha256"): Hash;
}
