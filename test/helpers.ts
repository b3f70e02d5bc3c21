import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";

export const ADMIN_KEY = env.ADMIN_API_KEY as string;
const BASE = "https://billing.test";

export interface CallOptions {
	key?: string | null;
	body?: unknown;
	/** A raw body string, sent as is. */
	raw?: string;
	headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
	status: number;
	headers: Headers;
	body: T;
}

/** Calls the Worker the way a client would, through its fetch handler. */
export async function call<T = any>(
	method: string,
	path: string,
	options: CallOptions = {},
): Promise<ApiResponse<T>> {
	const headers: Record<string, string> = { ...options.headers };
	const key = options.key === undefined ? ADMIN_KEY : options.key;
	if (key !== null) headers.Authorization = `Bearer ${key}`;
	let body: string | undefined = options.raw;
	if (options.body !== undefined) {
		body = JSON.stringify(options.body);
		headers["Content-Type"] ??= "application/json";
	}
	const response = await exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body }));
	// A binary body (a PDF) is decoded from its bytes: .text() on it makes the runtime print a warning.
	const textual = /^(?:text\/|application\/(?:[\w.+-]*\+)?json)|^$/.test(
		response.headers.get("Content-Type") ?? "",
	);
	const text = textual ? await response.text() : new TextDecoder().decode(await response.arrayBuffer());
	let parsed: unknown = text;
	try {
		parsed = text ? JSON.parse(text) : null;
	} catch {}
	return { status: response.status, headers: response.headers, body: parsed as T };
}

export const get = <T = any>(path: string, options?: CallOptions) => call<T>("GET", path, options);
export const post = <T = any>(path: string, body?: unknown, options?: CallOptions) =>
	call<T>("POST", path, { ...options, body });
export const patch = <T = any>(path: string, body?: unknown, options?: CallOptions) =>
	call<T>("PATCH", path, { ...options, body });
export const del = <T = any>(path: string, options?: CallOptions) => call<T>("DELETE", path, options);

/** Asserts an error response of the contract's shape and returns its error object. */
export function expectError(response: ApiResponse, status: number, code: string) {
	expect(response.status, JSON.stringify(response.body)).toBe(status);
	expect(response.body.error.code).toBe(code);
	expect(typeof response.body.error.message).toBe("string");
	expect(response.body.error.request_id).toBe(response.headers.get("X-Request-Id"));
	return response.body.error as {
		code: string;
		message: string;
		details?: { path: string; message: string }[];
	};
}

export type KeyKind = "sdk" | "read-only" | "read-write" | "admin";

/** Creates a key of that kind in that environment (through the API, with the operator key). */
export async function createKey(kind: KeyKind, environment: "live" | "test" = "live"): Promise<string> {
	const body = kind === "sdk" ? { type: "sdk", environment } : { type: "api", environment, permission: kind };
	const response = await post("/v1/api-keys", body);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body.key as string;
}

export async function createAgent(key: string = ADMIN_KEY, overrides: Record<string, unknown> = {}) {
	const response = await post(
		"/v1/agents",
		{ name: "Lead qualifier", type: "langgraph", ...overrides },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; name: string };
}

export async function createAccount(key: string = ADMIN_KEY, overrides: Record<string, unknown> = {}) {
	const response = await post(
		"/v1/accounts",
		{ name: "Acme", email: "billing@acme.test", ...overrides },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; currency: string };
}
