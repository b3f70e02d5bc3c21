import { z } from "@hono/zod-openapi";

const DIGITS = /^[0-9]+$/;

/**
 * An integer query parameter (docs/conventions.md#requests-and-responses): plain decimal digits only, so `1e2`, `+5`, `0x10`, `5.0` and ` 5` are refused
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
