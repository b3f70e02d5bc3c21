// The project has no @types/node; the signature test needs only this much of node:crypto (nodejs_compat provides it).
declare module "node:crypto" {
	interface Hmac {
		update(data: string): Hmac;
		digest(encoding: "hex" | "base64"): string;
	}
	export function createHmac(algorithm: "sha256", key: string | Uint8Array): Hmac;
}
