import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Scope } from "../db/scope";
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
	};
}

export type AppContext = Context<AppEnv>;
export type Router = OpenAPIHono<AppEnv>;
