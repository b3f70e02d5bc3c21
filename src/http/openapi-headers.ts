/** The headers and the access sentence that middlewares make true of operations, for openapi-document.ts. */
import { EVENT_PATHS } from "./idempotency";
import type { Access } from "./permissions";

// biome-ignore lint/suspicious/noExplicitAny: a generated JSON document, walked generically
type J = any;

export const PORTAL_ACCESS =
	"Who may call it: a customer portal token (`pst_…`) only, for its own account; API and SDK keys answer 401.";

export const HEADERS: Record<string, J> = {
	"X-Request-Id": {
		description:
			"The request's id (the caller's own `X-Request-Id` when it sent one). Quote it in support requests.",
		required: true,
		schema: { type: "string", example: "req_01jd0000000000000000000000" },
	},
	"X-RateLimit-Limit": {
		description: "Requests this key may make per 60-second window.",
		required: true,
		schema: { type: "integer", example: 1000 },
	},
	"X-RateLimit-Remaining": {
		description: "Requests left in the current window, after this one.",
		required: true,
		schema: { type: "integer", example: 999 },
	},
	"X-RateLimit-Reset": {
		description: "When the current window ends, in Unix epoch seconds.",
		required: true,
		schema: { type: "integer", example: 1795255260 },
	},
	"Retry-After": {
		description: "Seconds until the rate-limit window resets.",
		required: true,
		schema: { type: "integer", minimum: 1, example: 12 },
	},
	"WWW-Authenticate": {
		description: "Always `Bearer`.",
		required: true,
		schema: { type: "string", enum: ["Bearer"] },
	},
	"Idempotent-Replayed": {
		description:
			"`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
		required: false,
		schema: { type: "string", enum: ["true"] },
	},
};

export const IDEMPOTENCY_KEY: J = {
	name: "Idempotency-Key",
	in: "header",
	required: false,
	description:
		"Makes a retry safe: the first completed response is kept for 24 hours (per environment, API key, method " +
		"and path) and a repeat with the same body gets it again with `Idempotent-Replayed: true`; a different body " +
		"answers 409 idempotency_key_reused, a repeat while the first still runs 409 idempotency_key_in_use.",
	schema: { type: "string", minLength: 1, maxLength: 255, example: "c2f1d1e4-order-42" },
};

export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

export function accessText(access: Access | undefined): string | null {
	if (!access) return null;
	const api = access.api === "admin" ? "admin API keys" : `API keys with ${access.api} permission or more`;
	return `Who may call it: ${access.sdk ? `SDK keys and ${api}` : api}.`;
}

/** Statuses at which the idempotency middleware can have stored a response that a repeat replays. */
function replayable(path: string, status: string): boolean {
	if (EVENT_PATHS.has(path)) return status === "200";
	return status.startsWith("2") || status === "400" || status === "404" || status === "409";
}

/** An operation that overrides the document's bearer security with none. */
export const isPublic = (operation: J) =>
	Array.isArray(operation.security) && operation.security.length === 0;

export function responseHeaders(
	method: string,
	path: string,
	status: string,
	open: boolean,
): Record<string, J> {
	const headers: Record<string, J> = { "X-Request-Id": ref("headers", "X-Request-Id") };
	if (open) return headers;
	if (status !== "401") {
		for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
			// A 500 can come from before the rate limiter answered.
			headers[name] = status === "500" ? { ...HEADERS[name], required: false } : ref("headers", name);
		}
	}
	if (status === "401") headers["WWW-Authenticate"] = ref("headers", "WWW-Authenticate");
	if (status === "429") headers["Retry-After"] = ref("headers", "Retry-After");
	if (method === "post" && replayable(path, status)) {
		headers["Idempotent-Replayed"] = ref("headers", "Idempotent-Replayed");
	}
	return headers;
}
