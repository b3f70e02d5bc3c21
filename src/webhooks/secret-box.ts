// Webhook signing secrets are needed in clear to sign deliveries, so they cannot be hashed like API keys; they are
// stored encrypted instead (AES-256-GCM, a fresh 12-byte IV per secret, the endpoint id as additional data so a
// ciphertext cannot be moved to another endpoint). Stored form: "enc1:<k|a>:<base64 iv>:<base64 ciphertext>".
//
// The key comes from a Worker secret:
//   k — WEBHOOK_SECRETS_KEY, base64 of 32 random bytes (set it in production: `wrangler secret put ...`);
//   a — when that is unset, a key derived (HKDF-SHA-256) from ADMIN_API_KEY, so local development and tests need
//       nothing more. Rotating ADMIN_API_KEY would then lose the webhook secrets, which is why production sets k;
//       the cron sweep re-seals "a" rows with k once k exists.
// With neither set there is no key, and creating a webhook endpoint fails with a message naming the variable.
// Rows written before encryption (a plain "whsec_…") still sign deliveries and are sealed by the sweep.
import { and, eq, like, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { webhookEndpoints } from "../db/schema";
import type { Env } from "../env";
import { DomainError } from "../lib/errors";

type KeySource = "k" | "a";
const PREFIX = "enc1:";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

type SecretsEnv = Pick<Env, "WEBHOOK_SECRETS_KEY" | "ADMIN_API_KEY">;

export class MissingSecretsKey extends DomainError {
	constructor() {
		super(
			"internal_error",
			"Webhook signing secrets are stored encrypted, and this deployment has no key for it: set the Worker " +
				"secret WEBHOOK_SECRETS_KEY (base64 of 32 random bytes).",
		);
	}
}

async function keyFor(env: SecretsEnv, source: KeySource): Promise<CryptoKey> {
	if (source === "k") {
		if (!env.WEBHOOK_SECRETS_KEY) throw new MissingSecretsKey();
		const raw = fromBase64(env.WEBHOOK_SECRETS_KEY.trim());
		if (raw.length !== 32) throw new MissingSecretsKey();
		return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
	}
	if (!env.ADMIN_API_KEY) throw new MissingSecretsKey();
	const base = await crypto.subtle.importKey("raw", encoder.encode(env.ADMIN_API_KEY), "HKDF", false, [
		"deriveKey",
	]);
	return crypto.subtle.deriveKey(
		{ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("webhook-secrets/v1") },
		base,
		{ name: "AES-GCM", length: 256 },
		false,
		["encrypt", "decrypt"],
	);
}

const preferredSource = (env: SecretsEnv): KeySource => (env.WEBHOOK_SECRETS_KEY ? "k" : "a");

/** The stored form of an endpoint's signing secret. */
export async function sealWebhookSecret(
	env: SecretsEnv,
	endpointId: string,
	secret: string,
): Promise<string> {
	const source = preferredSource(env);
	const key = await keyFor(env, source);
	const iv = crypto.getRandomValues(new Uint8Array(12));
	const sealed = await crypto.subtle.encrypt(
		{ name: "AES-GCM", iv, additionalData: encoder.encode(endpointId) },
		key,
		encoder.encode(secret),
	);
	return `${PREFIX}${source}:${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

/** The signing secret from its stored form (a plain secret of an older row is returned as it is). */
export async function openWebhookSecret(
	env: SecretsEnv,
	endpointId: string,
	stored: string,
): Promise<string> {
	if (!stored.startsWith(PREFIX)) return stored;
	const [source, iv, sealed] = stored.slice(PREFIX.length).split(":") as [KeySource, string, string];
	const plain = await crypto.subtle.decrypt(
		{ name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(endpointId) },
		await keyFor(env, source),
		fromBase64(sealed),
	);
	return decoder.decode(plain);
}

/**
 * Seals, 100 at a time, the rows still holding a plain secret, and (once WEBHOOK_SECRETS_KEY is set) those sealed
 * with the key derived from ADMIN_API_KEY. Each row is rewritten only if unchanged since read. Returns how many.
 */
export async function resealWebhookSecrets(db: Db, env: SecretsEnv): Promise<number> {
	if (!env.WEBHOOK_SECRETS_KEY && !env.ADMIN_API_KEY) return 0;
	const stale = env.WEBHOOK_SECRETS_KEY
		? or(like(webhookEndpoints.secret, "whsec_%"), like(webhookEndpoints.secret, `${PREFIX}a:%`))
		: like(webhookEndpoints.secret, "whsec_%");
	const rows = await db
		.select({ id: webhookEndpoints.id, secret: webhookEndpoints.secret })
		.from(webhookEndpoints)
		.where(stale)
		.limit(100);
	if (rows.length === 0) return 0;
	const sealed = await Promise.all(
		rows.map(async (row) => sealWebhookSecret(env, row.id, await openWebhookSecret(env, row.id, row.secret))),
	);
	const [first, ...rest] = rows.map((row, i) =>
		db
			.update(webhookEndpoints)
			.set({ secret: sealed[i] as string })
			.where(and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.secret, row.secret))),
	);
	if (first) await db.batch([first, ...rest]);
	return rows.length;
}
