import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { database } from "../db/client";
import type { InScope } from "../db/rows";
import type { Scope } from "../db/scope";
import type { IdempotencyClaim } from "../db/write-once";
import type { Env } from "../env";
import type { Principal } from "./auth";

export interface AppEnv {
	Bindings: Env;
	Variables: {
		requestId: string;
		principal: Principal;
		scope: Scope;
		/** Response fields that hold a secret, never stored with an idempotency record (see idempotency.ts). */
		secretFields?: string[];
		/** The JSON body as parsed by the body check (body.ts); never changed after: the schemas parse copies. */
		parsedBody?: { value: unknown };
		/** The Idempotency-Key this request claimed (idempotency.ts), for writes that commit with their answer. */
		idempotencyClaim?: IdempotencyClaim;
		/** Set when an earlier request with this key committed its write but its answer was lost: what it stored. */
		idempotencyCommitted?: string[];
	};
}

export type AppContext = Context<AppEnv>;
export type Router = OpenAPIHono<AppEnv>;

/** What a domain verb runs with, from a request's context: the database and the caller's environment. */
export function scopeOf<E extends { Bindings: Env; Variables: { scope: Scope } }>(c: Context<E>): InScope {
	return { db: database(c.env.DB), scope: c.get("scope") };
}
