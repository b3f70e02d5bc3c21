/**
 * The HTTP edge's own errors and their statuses, without zod: what the middlewares and the ingest app need before
 * anything else is loaded (docs/scaling.md#cold-start). errors.ts adds the error body's schema for the document.
 */
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
