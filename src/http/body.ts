import type { MiddlewareHandler } from "hono";
import { ApiError } from "./api-error";
import type { AppEnv } from "./context";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPE = /^application\/json\s*(;.*)?$/i;
const UTF8 = /^utf-?8$/i;

/**
 * JSON-only bodies: 413 over 1 MiB, 415 without a JSON content type, 400 invalid_json when unparsable.
 * The text stays cached on the request, so the route validators read it without reading twice; the parsed
 * value is kept as `parsedBody` for the event routes' fast path (metering/routes.ts), which then parses nothing.
 */
export const jsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
	if (!["POST", "PATCH", "PUT"].includes(c.req.method)) return next();
	const declared = Number(c.req.header("Content-Length") ?? "0");
	if (declared > MAX_BODY_BYTES) throw tooLarge();
	const text = await c.req.text();
	// UTF-8 takes at most 3 bytes per UTF-16 unit, so most bodies need no encoding to be measured.
	if (text.length * 3 > MAX_BODY_BYTES && new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES) {
		throw tooLarge();
	}
	const contentType = c.req.header("Content-Type");
	if (text.length === 0 && c.req.method === "POST") {
		// No bytes at all is `{}` (docs/conventions.md#requests-and-responses), with or without a Content-Type (a
		// fetch of an empty string says text/plain by itself): a POST whose fields are all optional needs none.
		// The route's validators then read `{}` as JSON, and a route with required fields names what is missing.
		const headers = new Headers(c.req.raw.headers);
		headers.set("Content-Type", "application/json");
		c.req.raw = new Request(c.req.raw.url, { method: "POST", headers, body: "{}" });
		c.req.bodyCache = { text: Promise.resolve("{}") as unknown as string };
		c.set("parsedBody", { value: {} });
		return next();
	}
	if (text.length === 0 && !contentType) return next();
	if (!contentType || !JSON_TYPE.test(contentType)) {
		throw new ApiError(
			"unsupported_media_type",
			"Send the body as JSON with 'Content-Type: application/json'.",
		);
	}
	const charset = charsetOf(contentType);
	if (charset !== undefined && !UTF8.test(charset)) {
		throw new ApiError(
			"unsupported_media_type",
			`Send the JSON body in UTF-8 (charset=utf-8, or no charset), not ${charset.slice(0, 40)}.`,
		);
	}
	if (text.length > 0) {
		try {
			c.set("parsedBody", { value: JSON.parse(text) });
		} catch {
			throw new ApiError("invalid_json", "The request body is not valid JSON.");
		}
	}
	await next();
};

/** The charset parameter of a Content-Type (unquoted), if any. The body is read as UTF-8, so no other may be named. */
function charsetOf(contentType: string): string | undefined {
	for (const parameter of contentType.split(";").slice(1)) {
		const [name, ...rest] = parameter.split("=");
		if (name?.trim().toLowerCase() === "charset")
			return rest
				.join("=")
				.trim()
				.replace(/^"(.*)"$/, "$1");
	}
	return undefined;
}

function tooLarge(): ApiError {
	return new ApiError("payload_too_large", "The request body is larger than 1 MiB.");
}
