import type { MiddlewareHandler } from "hono";
import { validationError } from "../lib/errors";
import type { AppEnv } from "./context";

/**
 * A query parameter given more than once (`limit=1&limit=200`) is refused (docs/conventions.md#requests-and-responses): every query parameter of the API
 * is a single value, and picking one of several would be a guess.
 */
export const singleQueryValues: MiddlewareHandler<AppEnv> = async (c, next) => {
	// Most requests (every event sent) have no query: no URL to parse.
	const url = c.req.url;
	const query = url.indexOf("?");
	if (query === -1) return next();
	const seen = new Set<string>();
	for (const name of new URLSearchParams(url.slice(query + 1)).keys()) {
		if (seen.has(name)) {
			throw validationError(name, `The query parameter '${name}' is given more than once; give it once.`);
		}
		seen.add(name);
	}
	await next();
};
