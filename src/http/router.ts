import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import type { ErrorDetail } from "../lib/errors";
import { ApiError } from "./api-error";
import type { AppEnv } from "./context";
import { type Access, declareAccess } from "./permissions";

/** `events[3].agent_key` from zod's ["events", 3, "agent_key"]. */
export function issuePath(path: readonly PropertyKey[], target?: string): string {
	let out = "";
	for (const part of path) {
		if (typeof part === "number") out += `[${part}]`;
		else out += out === "" ? String(part) : `.${String(part)}`;
	}
	return out === "" ? (target === "json" ? "body" : (target ?? "")) : out;
}

/** zod's invalid_type for a value left out ("…, received undefined"): said plainly. */
const isMissing = (issue: ZodError["issues"][number]) =>
	issue.code === "invalid_type" && / received undefined$/.test(issue.message);

export function zodToApiError(error: ZodError, target?: string): ApiError {
	const details: ErrorDetail[] = error.issues.map((issue) => {
		if (isMissing(issue)) return { path: issuePath(issue.path, target), message: "Required." };
		if (issue.code === "unrecognized_keys") {
			const base = issue.path.length === 0 ? "" : issuePath(issue.path, target);
			return {
				path: issue.keys.map((k) => (base === "" ? k : `${base}.${k}`)).join(", "),
				message: `Unknown field${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}.`,
			};
		}
		return { path: issuePath(issue.path, target), message: issue.message };
	});
	const where = target === "query" ? "query parameters" : target === "param" ? "path" : "request body";
	const first = details[0];
	const message = first ? `Invalid ${where}: ${first.path} — ${first.message}` : `Invalid ${where}.`;
	return new ApiError("validation_error", message, { details });
}

/** A router whose request validation failures become 400 validation_error. */
export function newRouter(): OpenAPIHono<AppEnv> {
	return new OpenAPIHono<AppEnv>({
		defaultHook: (result) => {
			if (!result.success) throw zodToApiError(result.error as ZodError, result.target);
		},
	});
}

/**
 * A router of API routes (mounted under /v1): every route declares who may call it where it is defined, with
 * `access` in its createRoute (READ, WRITE, ADMIN, SDK_READ, SDK_WRITE of permissions.ts). The declaration is
 * recorded for the gate, which checks it before routing, and kept out of the OpenAPI document; a route without
 * one is refused when its module loads.
 */
export function apiRouter(): OpenAPIHono<AppEnv> {
	const router = newRouter();
	const define = router.openapi as unknown as (route: RouteConfig, ...rest: unknown[]) => unknown;
	router.openapi = ((route: RouteConfig & { access?: Access }, ...rest: unknown[]) => {
		const { access, ...config } = route;
		if (!access) throw new Error(`${route.method.toUpperCase()} ${route.path} declares no access`);
		declareAccess(route.method, route.path, access);
		return define(config as RouteConfig, ...rest);
	}) as typeof router.openapi;
	return router;
}
