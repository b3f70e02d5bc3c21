/**
 * What a domain verb throws when it refuses: a code, a message for people, and the fields at fault. It says nothing
 * of HTTP; the HTTP edge (src/http/errors.ts) alone turns a code into a status.
 */
export const DOMAIN_ERROR_CODES = [
	"validation_error",
	"forbidden",
	"not_found",
	"conflict",
	"internal_error",
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

export interface ErrorDetail {
	path: string;
	message: string;
}

export class DomainError extends Error {
	readonly code: DomainErrorCode;
	readonly details?: ErrorDetail[];

	constructor(code: DomainErrorCode, message: string, options?: { details?: ErrorDetail[] }) {
		super(message);
		this.name = "DomainError";
		this.code = code;
		this.details = options?.details;
	}
}

export const notFound = (what: string, id: string) =>
	new DomainError("not_found", `No ${what} with id '${id}'.`);
export const conflict = (message: string) => new DomainError("conflict", message);
export const validationError = (path: string, message: string) =>
	new DomainError("validation_error", message, { details: [{ path, message }] });
