/**
 * Who is signed in. The key is pasted once and kept in sessionStorage (gone when the tab closes); nothing about
 * the session lives on the server. What the key may do and which environment it belongs to are derived from
 * the public API alone:
 * - GET /v1/api-keys answers 200 only to admin keys, and lists only keys of the caller's environment. A stored
 *   admin key is always in that list, so a non-empty list names the environment; an admin key that the list
 *   does not contain at all is the operator key (ADMIN_API_KEY), which is by definition a live admin key.
 * - Any other API key gets 403 there; the 403 message names its permission. Its environment is not visible
 *   through the API to a non-admin key, and the console says so rather than guess.
 */
import { Api, ApiFailure, type Page } from "./api";

const STORAGE_KEY = "amb.console.key";

export type Environment = "live" | "test";
export type Permission = "admin" | "read-write" | "read-only";

export interface Identity {
	key: string;
	api: Api;
	permission: Permission | null;
	environment: Environment | null;
	/** How the key reads in the header: its name, or its first characters. */
	label: string;
	isOperatorKey: boolean;
}

interface ApiKeyRow {
	id: string;
	environment: Environment;
	name: string | null;
	prefix: string;
}

/** The display prefix the API stores for a key (src/keys/keys.ts: `sk_api_` and the next six characters). */
export function displayPrefix(secret: string): string {
	return `${secret.slice(0, secret.indexOf("_", 3) + 7)}…`;
}

export class SignInError extends Error {}

export async function identify(rawKey: string): Promise<Identity> {
	const key = rawKey.trim();
	if (key === "") throw new SignInError("Paste an API key (it starts with sk_api_).");
	if (/^sk_(live|test)_/.test(key)) {
		throw new SignInError(
			"This is an SDK key: it may only send events and read usage. Sign in with an API key (sk_api_…) of permission read-only, read-write or admin.",
		);
	}
	const api = new Api(key);
	const prefix = displayPrefix(key);
	try {
		const keys: ApiKeyRow[] = [];
		for (let offset = 0; ; offset += 100) {
			const page = await api.get<Page & { api_keys: ApiKeyRow[] }>("/api-keys", { limit: 100, offset });
			keys.push(...page.api_keys);
			if (keys.some((row) => row.prefix === prefix) || offset + 100 >= page.total) break;
		}
		const own = keys.find((row) => row.prefix === prefix);
		const environment = own?.environment ?? keys[0]?.environment ?? "live";
		return {
			key,
			api,
			permission: "admin",
			environment,
			label: own ? (own.name ?? prefix) : "operator key",
			isOperatorKey: own === undefined,
		};
	} catch (error) {
		if (!(error instanceof ApiFailure) || error.status !== 403) throw error;
		const permission = /\b(read-only|read-write)\b/.exec(error.message)?.[1] as Permission | undefined;
		if (!permission) throw error;
		return { key, api, permission, environment: null, label: prefix, isOperatorKey: false };
	}
}

export function storedKey(): string | null {
	return sessionStorage.getItem(STORAGE_KEY);
}

export function storeKey(key: string): void {
	sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetKey(): void {
	sessionStorage.removeItem(STORAGE_KEY);
}
