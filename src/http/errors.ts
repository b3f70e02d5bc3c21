import { z } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { BudgetDetail, DomainError, ErrorDetail } from "../lib/errors";

export const ERROR_CODES = [
	"invalid_json",
	"validation_error",
	"unauthorized",
	"forbidden",
	"not_found",
	"method_not_allowed",
	"conflict",
	"budget_exceeded",
	"idempotency_key_reused",
	"idempotency_key_in_use",
	"payload_too_large",
	"unsupported_media_type",
	"rate_limited",
	"internal_error",
	"payment_provider_error",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function statusOf(code: ErrorCode): ContentfulStatusCode {
	switch (code) {
		case "invalid_json":
		case "validation_error":
			return 400;
		case "unauthorized":
			return 401;
		case "forbidden":
			return 403;
		case "not_found":
			return 404;
		case "method_not_allowed":
			return 405;
		case "conflict":
		case "budget_exceeded":
		case "idempotency_key_reused":
		case "idempotency_key_in_use":
			return 409;
		case "payload_too_large":
			return 413;
		case "unsupported_media_type":
			return 415;
		case "rate_limited":
			return 429;
		case "internal_error":
			return 500;
		case "payment_provider_error":
			return 502;
	}
}

/**
 * An error of the HTTP edge itself (authentication, rate limit, routing, body checks), with the headers it adds;
 * app.onError renders it, and a domain error through `fromDomainError`.
 */
export class ApiError extends Error {
	readonly code: ErrorCode;
	readonly details?: ErrorDetail[] | BudgetDetail[];
	readonly headers?: Record<string, string>;

	constructor(
		code: ErrorCode,
		message: string,
		options?: { details?: ErrorDetail[] | BudgetDetail[]; headers?: Record<string, string> },
	) {
		super(message);
		this.name = "ApiError";
		this.code = code;
		this.details = options?.details;
		this.headers = options?.headers;
	}

	get status(): ContentfulStatusCode {
		return statusOf(this.code);
	}
}

/** A domain verb's refusal as the HTTP edge answers it (this fails to compile for a code without a status). */
export function fromDomainError(error: DomainError): ApiError {
	return new ApiError(error.code, error.message, error.details ? { details: error.details } : undefined);
}

export const ErrorBody = z
	.object({
		error: z.object({
			code: z.enum(ERROR_CODES).openapi({ example: "validation_error" }),
			message: z.string().openapi({ example: "Invalid request body: name — Required." }),
			details: z
				.array(
					z.union([
						z.object({ path: z.string(), message: z.string() }),
						z
							.object({
								alert_id: z.string(),
								threshold: z.number(),
								spent: z.number(),
								held: z.number(),
								requested: z.number(),
							})
							.openapi({ description: "budget_exceeded: a budget the reservation did not fit." }),
					]),
				)
				.optional()
				.openapi({ example: [{ path: "name", message: "Required." }] }),
			request_id: z.string().openapi({ example: "req_01jd0000000000000000000000" }),
		}),
	})
	.openapi("Error");

const descriptions: Record<number, string> = {
	400: "Invalid JSON or a validation error",
	401: "Missing, unknown or revoked key",
	403: "The key may not call this operation",
	404: "Not found",
	409: "Conflict with the current state or with an earlier idempotent request",
	413: "Body over 1 MiB",
	415: "Body without Content-Type: application/json",
	429: "Over the key's rate limit",
	500: "Unexpected error",
	502: "The payment provider (Stripe) refused the request or did not answer",
};

/** Error responses for an OpenAPI route: the common ones plus those the route adds. */
export function errorResponses(...extra: (400 | 404 | 409 | 413 | 415 | 502)[]) {
	const statuses = [...new Set([401, 403, 429, 500, ...extra])].sort();
	return Object.fromEntries(
		statuses.map((s) => [
			s,
			{ description: descriptions[s] ?? "Error", content: { "application/json": { schema: ErrorBody } } },
		]),
	) as Record<number, { description: string; content: { "application/json": { schema: typeof ErrorBody } } }>;
}

/** Body errors for routes that take a JSON body. */
export const bodyErrors = [400, 409, 413, 415] as const;
