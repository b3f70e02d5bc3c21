import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono, MiddlewareHandler } from "hono";
import { validationError } from "../lib/errors";
import type { AppEnv } from "./context";

/**
 * A POST whose operation takes no body (void, retry…) is refused when it receives one (docs/conventions.md#requests-and-responses): a body there is a
 * client's mistake (a wrong URL, an old API version), and ignoring it would hide that. An empty object `{}` counts
 * as no body, since many clients send one by default. Which operations take no body is read from the app's
 * OpenAPI registry, so routes added later are covered without a list to keep.
 */
export function refuseUnexpectedBody(app: Hono<AppEnv>): MiddlewareHandler<AppEnv> {
	let bodyless: RegExp[] | undefined;
	return async (c, next) => {
		if (c.req.method !== "POST") return next();
		const text = (await c.req.text()).trim();
		if (text === "" || /^\{\s*\}$/.test(text)) return next();
		bodyless ??= bodylessPosts(app);
		if (bodyless.some((pattern) => pattern.test(c.req.path))) {
			throw validationError("body", "This operation takes no request body; send none.");
		}
		await next();
	};
}

/** The POST operations of the app's OpenAPI registry that take no body; none for an app without one (ingest-app.ts). */
function bodylessPosts(app: Hono<AppEnv> | OpenAPIHono<AppEnv>): RegExp[] {
	const patterns: RegExp[] = [];
	if (!("openAPIRegistry" in app)) return patterns;
	for (const definition of app.openAPIRegistry.definitions) {
		if (definition.type !== "route") continue;
		const { method, path, request } = definition.route;
		if (method !== "post" || request?.body !== undefined) continue;
		const source = path
			.split(/\{[^}]+\}/)
			.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
			.join("[^/]+");
		patterns.push(new RegExp(`^${source}$`));
	}
	return patterns;
}
