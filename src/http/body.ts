import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

/**
 * JSON-only bodies: 413 over 1 MiB, 415 without a JSON content type, 400 invalid_json when unparsable.
 * The parsed text stays cached on the request, so the route validators read it without parsing twice.
 */
export const jsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
	if (!["POST", "PATCH", "PUT"].includes(c.req.method)) return next();
	const declared = Number(c.req.header("Content-Length") ?? "0");
	if (declared > MAX_BODY_BYTES) throw tooLarge();
	const text = await c.req.text();
	if (new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES) throw tooLarge();
	const contentType = c.req.header("Content-Type");
	if (text.length === 0 && !contentType) return next();
	if (!contentType || !JSON_TYPE.test(contentType)) {
		throw new ApiError(
			"unsupported_media_type",
			"Send the body as JSON with 'Content-Type: application/json'.",
		);
	}
	if (text.length > 0) {
		try {
			JSON.parse(text);
		} catch {
			throw new ApiError("invalid_json", "The request body is not valid JSON.");
		}
	}
	await next();
};

function tooLarge(): ApiError {
	return new ApiError("payload_too_large", "The request body is larger than 1 MiB.");
}
