import { isNull } from "drizzle-orm";
import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { newestFirst } from "../db/pages";
import type { InScope, Page } from "../db/rows";
import { apiKeys } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Environment } from "../env";
import { DomainError, validationError } from "../lib/errors";
import { newId } from "../lib/ids";
import type { ApiKeyPermission } from "../lib/key-permissions";
import { sha256Hex } from "../lib/sha256";
import { nowIso } from "../lib/time";

export type ApiKeyType = "sdk" | "api";
export type { ApiKeyPermission };

export interface ApiKeyView {
	id: string;
	type: ApiKeyType;
	environment: Environment;
	permission: ApiKeyPermission | null;
	name: string | null;
	prefix: string;
	created_at: string;
	last_used_at: string | null;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function randomToken(length: number): string {
	// 248 = 4 × 62: rejecting bytes at or above it keeps every character equally likely.
	let out = "";
	while (out.length < length) {
		for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
			if (b < 248 && out.length < length) out += BASE62[b % 62];
		}
	}
	return out;
}

export function secretPrefix(type: ApiKeyType, environment: Environment): string {
	return type === "api" ? "sk_api_" : `sk_${environment}_`;
}

/** A key is shown by its first characters only; the rest is never stored. */
export function displayPrefix(secret: string): string {
	return `${secret.slice(0, secret.indexOf("_", 3) + 7)}…`;
}

function toView(row: typeof apiKeys.$inferSelect): ApiKeyView {
	return {
		id: row.id,
		type: row.type,
		environment: row.environment,
		permission: row.permission,
		name: row.name,
		prefix: row.prefix,
		created_at: row.createdAt,
		last_used_at: row.lastUsedAt,
	};
}

export interface CreateApiKeyInput {
	type: ApiKeyType;
	environment?: Environment;
	permission?: ApiKeyPermission;
	name?: string;
}

/**
 * docs/keys-and-environments.md#environments: a key creates keys only in its own environment, so that a test-environment admin cannot mint a live key
 * and reach live data. Only the operator key (the Worker's ADMIN_API_KEY) may create keys in either.
 */
export async function createApiKey({
	db,
	scope,
	input,
	operator = false,
}: InScope & {
	input: CreateApiKeyInput;
	/** The caller is the operator key. */
	operator?: boolean;
}): Promise<ApiKeyView & { key: string }> {
	if (input.type === "api" && !input.permission) {
		throw validationError("permission", "An API key needs a permission: read-only, read-write or admin.");
	}
	if (input.type === "sdk" && input.permission) {
		throw validationError("permission", "SDK keys have fixed permissions; leave permission out.");
	}
	const environment = input.environment ?? scope.environment;
	if (environment !== scope.environment && !operator) {
		throw new DomainError(
			"forbidden",
			`A key of the ${scope.environment} environment may create keys only in the ${scope.environment} environment, not in ${environment}.`,
		);
	}
	const secret = `${secretPrefix(input.type, environment)}${randomToken(40)}`;
	const row = {
		id: newId("key"),
		environment,
		type: input.type,
		permission: input.permission ?? null,
		name: input.name ?? null,
		prefix: displayPrefix(secret),
		hash: sha256Hex(secret),
		createdAt: nowIso(),
		lastUsedAt: null,
		revokedAt: null,
	};
	// The record goes to the key's environment, where its admins look; never its secret or hash.
	await writeAudited(db, scope, [db.insert(apiKeys).values(row)], {
		action: "api_key.created",
		resourceId: row.id,
		environment,
		changes: created({
			type: row.type,
			environment,
			permission: row.permission,
			name: row.name,
			prefix: row.prefix,
		}),
	});
	return { ...toView(row), key: secret };
}

export async function listApiKeys({ db, scope, limit, offset }: InScope & Page) {
	const { rows, total } = await newestFirst(db, apiKeys, inScope(scope, apiKeys, isNull(apiKeys.revokedAt)), {
		limit,
		offset,
	});
	return { items: rows.map(toView), total };
}

/** Marks the key revoked; the caller also tells the key's rate limiter, which makes it answer 401 at once. */
export async function revokeApiKey({ db, scope, id }: { db: Db; scope: Scope; id: string }): Promise<void> {
	await updateAudited(
		db,
		scope,
		apiKeys,
		"API key",
		id,
		{ revokedAt: nowIso() },
		"api_key.revoked",
		isNull(apiKeys.revokedAt),
	);
}
