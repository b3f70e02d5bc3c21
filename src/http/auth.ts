import type { Db } from "../db/client";
import type { Env, Environment } from "../env";
import type { ApiKeyPermission } from "../lib/key-permissions";
import { nowIso } from "../lib/time";
import { ApiError } from "./api-error";

export type Principal =
	| { type: "sdk"; keyId: string; environment: Environment; permission: null }
	| { type: "api"; keyId: string; environment: Environment; permission: ApiKeyPermission };

export const OPERATOR_KEY_ID = "key_operator";
const KEY_SHAPE = /^sk_(live|test|api)_[A-Za-z0-9_]{8,200}$/;
// Known keys are cached in the isolate so the hot path needs no D1 read. Revocation still takes effect at
// once: the key's rate limiter, consulted on every request, answers "revoked".
const CACHE_TTL_MS = 60_000;
const cache = new Map<string, { principal: Principal; expires: number }>();

// Unknown keys are remembered briefly too, so that a caller repeating one made-up key costs a D1 read every few
// seconds rather than on every request. This cannot delay a new key: its secret is 40 random characters that
// nobody could have sent before the create response showed it. Bounded, oldest forgotten first.
export const UNKNOWN_KEY_TTL_MS = 5_000;
export const UNKNOWN_KEY_CACHE_SIZE = 10_000;
const unknownKeys = new Map<string, number>();

function rememberUnknownKey(hash: string, now: number): void {
	unknownKeys.delete(hash);
	if (unknownKeys.size >= UNKNOWN_KEY_CACHE_SIZE) {
		const oldest = unknownKeys.keys().next().value;
		if (oldest !== undefined) unknownKeys.delete(oldest);
	}
	unknownKeys.set(hash, now + UNKNOWN_KEY_TTL_MS);
}

function isKnownUnknown(hash: string, now: number): boolean {
	const expires = unknownKeys.get(hash);
	if (expires === undefined) return false;
	if (expires > now) return true;
	unknownKeys.delete(hash);
	return false;
}

/** How many unknown keys are remembered now (for tests). */
export function unknownKeyCount(): number {
	return unknownKeys.size;
}

// The operator key is compared by its hash, in constant time, so response timing tells nothing about how much
// of a guess matched. Its hash is computed once per value of the secret.
let operator: { key: string; hash: Uint8Array } | undefined;
const encoder = new TextEncoder();

function isOperatorKey(env: Env, hash: string, sha256Hex: (text: string) => string): boolean {
	const key = env.ADMIN_API_KEY;
	if (!key) return false;
	if (operator?.key !== key) operator = { key, hash: encoder.encode(sha256Hex(key)) };
	// Both are 64 hex digits: comparing their text is comparing the digests.
	return crypto.subtle.timingSafeEqual(encoder.encode(hash), operator.hash);
}

// lib/sha256.ts hashes with the runtime's node:crypto, whose modules a new isolate loads with its first key
// rather than at startup (docs/scaling.md#cold-start); later calls use it without a wait.
let hashing: typeof import("../lib/sha256") | undefined;

export function unauthorized(message: string): ApiError {
	return new ApiError("unauthorized", message, { headers: { "WWW-Authenticate": "Bearer" } });
}

export function forgetCachedKey(keyId: string): void {
	for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
}

/**
 * `db` is called only when the key is not cached: most requests need no database handle at all, and a new isolate
 * loads drizzle with its first lookup, not at startup (docs/scaling.md#cold-start).
 */
export async function authenticate(
	header: string | undefined,
	env: Env,
	db: () => Db | Promise<Db>,
	waitUntil: (p: Promise<unknown>) => void,
): Promise<Principal> {
	if (!header) throw unauthorized("Send your key as 'Authorization: Bearer <key>'.");
	const match = /^Bearer\s+(\S+)$/i.exec(header);
	const secret = match?.[1];
	if (secret?.startsWith("pst_")) {
		throw unauthorized("A customer portal token works only on /portal/api; /v1 takes API and SDK keys.");
	}
	if (!secret || !KEY_SHAPE.test(secret))
		throw unauthorized("The Authorization header is not a valid Bearer key.");

	hashing ??= await import("../lib/sha256");
	const hash = hashing.sha256Hex(secret);
	if (isOperatorKey(env, hash, hashing.sha256Hex)) {
		return { type: "api", keyId: OPERATOR_KEY_ID, environment: "live", permission: "admin" };
	}
	const now = Date.now();
	const cached = cache.get(hash);
	if (cached && cached.expires > now) return cached.principal;
	if (isKnownUnknown(hash, now)) throw unauthorized("This key is unknown or has been revoked.");

	const row = await findActiveKeyByHash(await db(), hash);
	if (!row) {
		cache.delete(hash);
		rememberUnknownKey(hash, now);
		throw unauthorized("This key is unknown or has been revoked.");
	}
	const principal: Principal =
		row.type === "sdk"
			? { type: "sdk", keyId: row.id, environment: row.environment, permission: null }
			: {
					type: "api",
					keyId: row.id,
					environment: row.environment,
					permission: row.permission ?? "read-only",
				};
	cache.set(hash, { principal, expires: Date.now() + CACHE_TTL_MS });
	waitUntil(Promise.resolve(db()).then((keys) => touchApiKey(keys, row.id)));
	return principal;
}

// The key's row is read here, not in keys/: authentication sits below every route, keys' routes included.
async function findActiveKeyByHash(db: Db, hash: string) {
	const [{ and, eq, isNull }, { apiKeys }] = await Promise.all([
		import("drizzle-orm"),
		import("../db/schema"),
	]);
	const [row] = await db
		.select()
		.from(apiKeys)
		.where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)))
		.limit(1);
	return row;
}

async function touchApiKey(db: Db, id: string): Promise<void> {
	const [{ eq }, { apiKeys }] = await Promise.all([import("drizzle-orm"), import("../db/schema")]);
	await db.update(apiKeys).set({ lastUsedAt: nowIso() }).where(eq(apiKeys.id, id));
}
