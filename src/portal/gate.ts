/**
 * The portal's own gate: everything under /portal/api passes here, and only here, in the order /v1 uses —
 * authenticate (401), count against the session's rate limit (429), find the route (404, 405). Only a live
 * portal token gets through; API and SDK keys (the operator's too) are not portal tokens and answer 401, just as
 * /v1 answers 401 to a portal token (http/auth.ts). The session fixes the environment and the one account every
 * portal route reads.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ZodError } from "zod";
import { database } from "../db/client";
import type { Scope } from "../db/scope";
import { countRequestOf, limitFor } from "../durable-objects/rate-limiter/limits";
import type { Env } from "../env";
import { ApiError } from "../http/api-error";
import { unauthorized } from "../http/auth";
import { applyRateLimit } from "../http/rate-limit";
import { zodToApiError } from "../http/router";
import { findLiveSession, PORTAL_TOKEN_SHAPE, type PortalSession } from "./sessions";

export interface PortalEnv {
	Bindings: Env;
	Variables: {
		requestId: string;
		/** The session's environment. */
		scope: Scope;
		session: PortalSession;
	};
}

/** A router for portal routes: validation failures become 400 validation_error, as under /v1. */
export function newPortalRouter(): OpenAPIHono<PortalEnv> {
	return new OpenAPIHono<PortalEnv>({
		defaultHook: (result) => {
			if (!result.success) throw zodToApiError(result.error as ZodError, result.target);
		},
	});
}

/** Every route of the portal API (all GET): what the gate answers 404 and 405 from. */
export const PORTAL_PATHS = [
	"/portal/api/overview",
	"/portal/api/invoices",
	"/portal/api/invoices/{invoice_id}",
	"/portal/api/invoices/{invoice_id}/pdf",
	"/portal/api/payments",
	"/portal/api/credit-notes",
	"/portal/api/credit-notes/{credit_note_id}/pdf",
] as const;

const patterns = PORTAL_PATHS.map((path) => new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}/?$`));

export const portalGate: MiddlewareHandler<PortalEnv> = async (c, next) => {
	// Customer data: never kept by a browser cache or a proxy.
	c.header("Cache-Control", "private, no-store");
	const header = c.req.header("Authorization");
	if (!header) throw unauthorized("Send the portal token as 'Authorization: Bearer pst_…'.");
	const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
	if (!token || !PORTAL_TOKEN_SHAPE.test(token)) {
		throw unauthorized(
			"The portal API takes only the token of a customer portal link (pst_…), not API keys.",
		);
	}
	const session = await findLiveSession(database(c.env.DB), token, new Date().toISOString());
	if (!session) throw unauthorized("This portal link has expired or was revoked; ask for a new one.");

	const decision = await countRequestOf(c.env, session.id, limitFor({ type: "api" }, c.env), (work) =>
		c.executionCtx.waitUntil(work),
	);
	applyRateLimit(c, decision);

	if (!patterns.some((pattern) => pattern.test(c.req.path))) {
		throw new ApiError("not_found", `No route ${c.req.method} ${c.req.path}.`);
	}
	if (c.req.method !== "GET" && c.req.method !== "HEAD") {
		throw new ApiError("method_not_allowed", `The portal is read-only: ${c.req.method} is not allowed.`, {
			headers: { Allow: "GET" },
		});
	}
	c.set("session", session);
	c.set("scope", { environment: session.environment });
	await next();
};
