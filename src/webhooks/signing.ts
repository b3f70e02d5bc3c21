// Two signatures on every delivery, so receivers can verify with a few lines of their own or with any Standard
// Webhooks library:
//   X-Webhook-Signature: hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the whole secret string;
//   webhook-signature:   "v1," + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the bytes that the
//                        base64 after "whsec_" encodes (the Standard Webhooks scheme).

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

function toBase64(bytes: Uint8Array): string {
	return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
	return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
	return `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

async function hmacSha256(key: Uint8Array, message: string): Promise<Uint8Array> {
	const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
		"sign",
	]);
	return new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(message)));
}

export async function hexSignature(secret: string, body: string): Promise<string> {
	const mac = await hmacSha256(encoder.encode(secret), body);
	return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function standardSignature(
	secret: string,
	id: string,
	timestamp: number,
	body: string,
): Promise<string> {
	const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
	return `v1,${toBase64(await hmacSha256(key, `${id}.${timestamp}.${body}`))}`;
}

/** Every header of one delivery attempt. `timestamp` is the attempt's time in Unix seconds. */
export async function deliveryHeaders(input: {
	secret: string;
	eventId: string;
	event: string;
	body: string;
	timestamp: number;
}): Promise<Record<string, string>> {
	const [hex, standard] = await Promise.all([
		hexSignature(input.secret, input.body),
		standardSignature(input.secret, input.eventId, input.timestamp, input.body),
	]);
	return {
		"Content-Type": "application/json",
		"User-Agent": "agent-metering-billing-webhooks/1",
		"X-Webhook-Signature": hex,
		"X-Webhook-Event": input.event,
		"X-Webhook-Id": input.eventId,
		"webhook-id": input.eventId,
		"webhook-timestamp": String(input.timestamp),
		"webhook-signature": standard,
	};
}
