/**
 * SHA-256 of a text as 64 hex digits, by the runtime's node:crypto (nodejs_compat, wrangler.toml): native and
 * synchronous. The key lookup every authenticated request makes hashes the key with it, without the promise and
 * the trip through the task queue that WebCrypto's digest costs (~30 µs a key awaited, inside workerd); request
 * bodies (idempotency) and derived ids use it too, so there is one way to hash. A 40-character key takes 3–5 µs
 * (test/lib/sha256.test.ts prints the figure), within a microsecond of the hand-written SHA-256 this
 * replaced: a negligible part of a request.
 */
import { createHash } from "node:crypto";

export function sha256Hex(text: string): string {
	return createHash("sha256").update(text).digest("hex");
}
