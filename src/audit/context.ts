/**
 * Who is making the change that a write is about to record: the request's key and id, or the system (a cron or
 * a queue consumer). The HTTP edge opens the context once per request (audit/gate.ts); everything the
 * request then runs, however deep, reads it here, so no verb has to be handed the actor. Outside a request
 * there is no context, and the actor is the system.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type ActorType = "operator" | "api_key" | "sdk_key" | "portal" | "system";

export interface AuditActor {
	type: ActorType;
	/** The API key's id; null for the operator key and the system. */
	keyId: string | null;
	/** The key's display prefix (`sk_api_Ab12Cd…`), never more of it. */
	keyPrefix: string | null;
}

export interface AuditContext {
	actor: AuditActor;
	/** The request's X-Request-Id; null for the system. */
	requestId: string | null;
}

export const SYSTEM_CONTEXT: AuditContext = {
	actor: { type: "system", keyId: null, keyPrefix: null },
	requestId: null,
};

const current = new AsyncLocalStorage<AuditContext>();

/** Runs `work` with `context` as the actor of every audit record it writes. */
export function actingAs<T>(context: AuditContext, work: () => Promise<T>): Promise<T> {
	return current.run(context, work);
}

export function currentAuditContext(): AuditContext {
	return current.getStore() ?? SYSTEM_CONTEXT;
}
