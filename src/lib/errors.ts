/**
 * What a domain verb throws when it refuses: a code, a message for people, and the fields at fault. It says nothing
 * of HTTP; the HTTP edge (src/http/errors.ts) alone turns a code into a status.
 */
export const DOMAIN_ERROR_CODES = [
	"validation_error",
	"forbidden",
	"not_found",
	"conflict",
	"budget_exceeded",
	"idempotency_key_reused",
	"internal_error",
	"payment_provider_error",
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

export interface ErrorDetail {
	path: string;
	message: string;
}

/** What a budget_exceeded error names: a budget a reservation did not fit (docs/reservations.md). */
export interface BudgetDetail {
	alert_id: string;
	threshold: number;
	spent: number;
	held: number;
	requested: number;
}

export class DomainError extends Error {
	readonly code: DomainErrorCode;
	readonly details?: ErrorDetail[] | BudgetDetail[];

	constructor(
		code: DomainErrorCode,
		message: string,
		options?: { details?: ErrorDetail[] | BudgetDetail[] },
	) {
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
/** Stripe refused or did not answer (docs/payments.md); `message` is Stripe's own, never a key. */
export const paymentProviderError = (message: string) =>
	new DomainError("payment_provider_error", `Stripe refused the request: ${message}`);

/**
 * A guarded write that kept losing races against concurrent writes of the same thing (docs/conventions.md#errors):
 * nothing was stored by this request, and trying again shortly succeeds.
 */
export const contention = (what: string) =>
	new DomainError(
		"conflict",
		`Too many concurrent changes to ${what} at once: nothing was stored by this request. Try again.`,
	);
