import { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "./api-error";

export { ApiError, ERROR_CODES, type ErrorCode, fromDomainError, statusOf } from "./api-error";

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
