/**
 * Stripe's webhook signature (docs/payments.md#stripes-webhooks): `Stripe-Signature: t=<unix seconds>,v1=<hex>…`,
 * each v1 the HMAC-SHA256 of "{t}.{raw body}" keyed with the UTF-8 bytes of the whole webhook secret (whsec_…
 * included). Any one v1 may match (Stripe sends several while a secret is rolled); a timestamp older than five
 * minutes is refused, so a captured delivery cannot be replayed later. The secret that verifies names the
 * environment.
 */
import type { Env, Environment } from "../../env";
import { stripeWebhookSecrets } from "../config";

export const SIGNATURE_TOLERANCE_SECONDS = 300;

interface ParsedSignature {
	timestamp: number;
	signatures: string[];
}

function parse(header: string): ParsedSignature | null {
	let timestamp: number | null = null;
	const signatures: string[] = [];
	for (const part of header.split(",")) {
		const at = part.indexOf("=");
		if (at < 0) continue;
		const name = part.slice(0, at).trim();
		const value = part.slice(at + 1).trim();
		if (name === "t" && timestamp === null && /^\d{1,12}$/.test(value)) timestamp = Number(value);
		else if (name === "v1" && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
	}
	return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

async function hmacHex(secret: string, payload: string): Promise<string> {
	const encoder = new TextEncoder();
	const key = await crypto.subtle.importKey(
		"raw",
		encoder.encode(secret),
		{ name: "HMAC", hash: "SHA-256" },
		false,
		["sign"],
	);
	const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(payload)));
	return [...mac].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Compares in time independent of where the strings differ. */
function sameText(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	let difference = 0;
	for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
	return difference === 0;
}

/** The environment whose webhook secret signed `body`, or null (missing, wrong or stale signature). */
export async function signedEnvironment(
	env: Env,
	header: string | undefined,
	body: string,
	nowSeconds = Math.floor(Date.now() / 1000),
): Promise<Environment | null> {
	const parsed = header ? parse(header) : null;
	if (parsed === null || nowSeconds - parsed.timestamp > SIGNATURE_TOLERANCE_SECONDS) return null;
	for (const { environment, secret } of stripeWebhookSecrets(env)) {
		const expected = await hmacHex(secret, `${parsed.timestamp}.${body}`);
		if (parsed.signatures.some((signature) => sameText(signature, expected))) return environment;
	}
	return null;
}
