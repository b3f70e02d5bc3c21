/**
 * Customer portal sessions (docs/portal.md): a bearer token for exactly one account, shown once, kept only as
 * its SHA-256 (like API keys), good until it expires or is revoked. Every portal request reads its session
 * from D1, so a revocation or an expiry answers 401 from the very next request.
 */

import { and, eq, gt, isNull } from "drizzle-orm";
import { getAccount } from "../accounts/accounts";
import { created as createdFields } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { portalSessions } from "../db/schema";
import type { Scope } from "../db/scope";
import type { Environment } from "../env";
import { newId } from "../lib/ids";
import { sha256Hex } from "../lib/sha256";

export const PORTAL_TOKEN_PREFIX = "pst_";
export const DEFAULT_EXPIRES_IN = 3_600;
export const MIN_EXPIRES_IN = 60;
export const MAX_EXPIRES_IN = 86_400;
/** "pst_" and 43 base64url characters: 32 random bytes, 256 bits. */
export const PORTAL_TOKEN_SHAPE = /^pst_[A-Za-z0-9_-]{43}$/;

export interface PortalSessionView {
	id: string;
	account_id: string;
	expires_at: string;
	created_at: string;
}

export interface CreatedPortalSession extends PortalSessionView {
	token: string;
	url: string;
}

/** The session a portal request acts as: one account of one environment. */
export interface PortalSession {
	id: string;
	environment: Environment;
	accountId: string;
	expiresAt: string;
}

function randomToken(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(32));
	let binary = "";
	for (const b of bytes) binary += String.fromCharCode(b);
	return `${PORTAL_TOKEN_PREFIX}${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** The page's address with the token in the fragment only: browsers never send a fragment to any server. */
export function portalUrl(origin: string, token: string): string {
	return `${origin}/portal#token=${token}`;
}

export async function createPortalSession({
	db,
	scope,
	accountId,
	expiresIn = DEFAULT_EXPIRES_IN,
	origin,
}: {
	db: Db;
	scope: Scope;
	accountId: string;
	/** Seconds, MIN_EXPIRES_IN–MAX_EXPIRES_IN (the route's schema checks the bounds). */
	expiresIn?: number;
	/** The Worker's origin, e.g. "https://billing.example.com". */
	origin: string;
}): Promise<CreatedPortalSession> {
	await getAccount({ db, scope, id: accountId });
	const token = randomToken();
	const created = Date.now();
	const row = {
		id: newId("pss"),
		environment: scope.environment,
		accountId,
		tokenHash: sha256Hex(token),
		expiresAt: new Date(created + expiresIn * 1000).toISOString(),
		revokedAt: null,
		createdAt: new Date(created).toISOString(),
	};
	// Neither the token, its hash nor the url carrying it is recorded.
	await writeAudited(db, scope, [db.insert(portalSessions).values(row)], {
		action: "portal_session.created",
		resourceId: row.id,
		changes: createdFields({ account_id: accountId, expires_at: row.expiresAt }),
	});
	return {
		id: row.id,
		account_id: accountId,
		token,
		url: portalUrl(origin, token),
		expires_at: row.expiresAt,
		created_at: row.createdAt,
	};
}

/** Revokes a session of this environment; an unknown or already revoked one is not found. */
export async function revokePortalSession({ db, scope, id }: { db: Db; scope: Scope; id: string }) {
	await updateAudited(
		db,
		scope,
		portalSessions,
		"portal session",
		id,
		{ revokedAt: new Date().toISOString() },
		"portal_session.revoked",
		isNull(portalSessions.revokedAt),
	);
}

/** The live session of a token: known, not revoked, not expired at `now`; else undefined. */
export async function findLiveSession(
	db: Db,
	token: string,
	now: string,
): Promise<PortalSession | undefined> {
	const [row] = await db
		.select({
			id: portalSessions.id,
			environment: portalSessions.environment,
			accountId: portalSessions.accountId,
			expiresAt: portalSessions.expiresAt,
		})
		.from(portalSessions)
		.where(
			and(
				eq(portalSessions.tokenHash, sha256Hex(token)),
				isNull(portalSessions.revokedAt),
				gt(portalSessions.expiresAt, now),
			),
		)
		.limit(1);
	return row;
}
