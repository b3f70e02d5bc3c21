import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { validationError } from "../lib/errors";
import type { AppEnv } from "./context";

const DIGITS = /^[0-9]+$/;

/**
 * An integer query parameter (§1): plain decimal digits only, so `1e2`, `+5`, `0x10`, `5.0` and ` 5` are refused
 * instead of being read the way JavaScript's Number() would read them.
 */
export function integerQuery({ min, max }: { min: number; max?: number }) {
	const range = max === undefined ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`;
	const message = `must be ${range}, written in plain digits (e.g. ${Math.max(min, 20)})`;
	let inner = z.number().int().min(min, message);
	if (max !== undefined) inner = inner.max(max, message);
	return z.preprocess((value, ctx) => {
		if (typeof value !== "string") return value;
		if (!DIGITS.test(value)) {
			ctx.addIssue({ code: "custom", message, input: value });
			return z.NEVER;
		}
		return Number(value);
	}, inner);
}

/**
 * A query parameter given more than once (`limit=1&limit=200`) is refused (§1): every query parameter of the API
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
