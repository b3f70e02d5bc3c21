import type { MiddlewareHandler } from "hono";
import { OPERATOR_KEY_ID } from "../http/auth";
import type { AppEnv } from "../http/context";
import { type AuditActor, actingAs } from "./context";

/** A key's display prefix, as stored with it (keys/keys.ts displayPrefix): its type and first 6 characters. */
function prefixOf(secret: string): string {
	return `${secret.slice(0, secret.indexOf("_", 3) + 7)}…`;
}

/**
 * Runs the rest of a /v1 request as its key (after the gate), so that every audit record it writes names that
 * key and the request's id (docs/audit-log.md).
 */
export const auditContext: MiddlewareHandler<AppEnv> = (c, next) => {
	const principal = c.get("principal");
	const secret = /^Bearer\s+(\S+)$/i.exec(c.req.header("Authorization") ?? "")?.[1] ?? "";
	const actor: AuditActor =
		principal.keyId === OPERATOR_KEY_ID
			? { type: "operator", keyId: null, keyPrefix: prefixOf(secret) }
			: {
					type: principal.type === "sdk" ? "sdk_key" : "api_key",
					keyId: principal.keyId,
					keyPrefix: prefixOf(secret),
				};
	return actingAs({ actor, requestId: c.get("requestId") }, () => next());
};
