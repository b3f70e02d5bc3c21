import type { Context, MiddlewareHandler } from "hono";
import { countRequest } from "../durable-objects/rate-limiter/limits";
import { ApiError } from "./api-error";
import { authenticate, type Principal, unauthorized } from "./auth";
import type { AppEnv } from "./context";
import { matchRoute, mayCall } from "./permissions";
import { applyRateLimit } from "./rate-limit";

// Requests the app makes to itself on behalf of a request this gate already counted (an MCP tool call runs its
// REST operation so): authenticated and permission-checked like any other, but not counted a second time.
const countedAlready = new WeakSet<Request>();

/** Marks a request built in-process for a request already counted; returns it. */
export function alreadyCounted(request: Request): Request {
	countedAlready.add(request);
	return request;
}

/**
 * Everything under /v1 (and /mcp) passes here first, in this order: authenticate (401), count against the key's rate
 * limit (429; every authenticated request counts), find the route (404, 405), check permission (403).
 */
export const gate: MiddlewareHandler<AppEnv> = async (c, next) => {
	const principal = await authenticate(
		c.req.header("Authorization"),
		c.env,
		async () => (await import("../db/client")).database(c.env.DB),
		(p) => c.executionCtx.waitUntil(p),
	);
	c.set("principal", principal);
	c.set("scope", { environment: principal.environment });
	if (!countedAlready.has(c.req.raw)) await countAndLimit(c, principal);
	authorize(c, principal);
	await next();
};

async function countAndLimit(c: Context<AppEnv>, principal: Principal): Promise<void> {
	const decision = await countRequest(c.env, principal, (work) => c.executionCtx.waitUntil(work));
	if (decision.revoked) throw unauthorized("This key is unknown or has been revoked.");
	applyRateLimit(c, decision);
}

function authorize(c: Context<AppEnv>, principal: Principal): void {
	const match = matchRoute(c.req.method, c.req.path);
	if (match === null) throw new ApiError("not_found", `No route ${c.req.method} ${c.req.path}.`);
	if ("allowed" in match) {
		throw new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}.`, {
			headers: { Allow: match.allowed.join(", ") },
		});
	}
	if (!mayCall(principal, match.access)) {
		const what = principal.type === "sdk" ? "An SDK key" : `A ${principal.permission} API key`;
		throw new ApiError("forbidden", `${what} may not call ${match.route}.`);
	}
}
