import { OpenAPIHono } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import type { ErrorDetail } from "../lib/errors";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

/** `events[3].agent_key` from zod's ["events", 3, "agent_key"]. */
export function issuePath(path: readonly PropertyKey[], target?: string): string {
	let out = "";
	for (const part of path) {
		if (typeof part === "number") out += `[${part}]`;
		else out += out === "" ? String(part) : `.${String(part)}`;
	}
	return out === "" ? (target === "json" ? "body" : (target ?? "")) : out;
}

export function zodToApiError(error: ZodError, target?: string): ApiError {
	const details: ErrorDetail[] = error.issues.map((issue) => {
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
