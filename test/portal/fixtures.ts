import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_KEY, get, post } from "../helpers";

export interface MintedSession {
	id: string;
	account_id: string;
	token: string;
	url: string;
	expires_at: string;
	created_at: string;
}

/** Mints a portal session for the account (through the API, with the operator key unless told). */
export async function mint(
	accountId: string,
	body: Record<string, unknown> = {},
	key: string = ADMIN_KEY,
): Promise<MintedSession> {
	const response = await post(`/v1/accounts/${accountId}/portal-sessions`, body, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as MintedSession;
}

export interface SessionRow {
	id: string;
	environment: string;
	account_id: string;
	token_hash: string;
	expires_at: string;
	revoked_at: string | null;
	created_at: string;
}

/** Stored sessions, by id or by account. */
export async function sessionRows(id?: string, accountId?: string): Promise<SessionRow[]> {
	const { results } = await env.DB.prepare(
		"SELECT * FROM portal_sessions WHERE (?1 IS NULL OR id = ?1) AND (?2 IS NULL OR account_id = ?2)",
	)
		.bind(id ?? null, accountId ?? null)
		.all<SessionRow>();
	return results;
}

/** A GET of the portal API with the token. */
export const portalGet = (path: string, token: string | null) => get(`/portal/api${path}`, { key: token });
