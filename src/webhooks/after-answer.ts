import type { MiddlewareHandler } from "hono";
import type { Env } from "../env";
import { noticingOutboxWrites } from "./outbox-writes";

/**
 * Every API request that wrote outbox rows (a subscription created or changed, an invoice generated, paid or
 * voided…) delivers them once it has answered, without holding up the response: one place instead of each
 * handler remembering to. Reads write nothing and skip it; the delivery code (dispatch.ts) is loaded only when it
 * runs (docs/scaling.md#cold-start).
 */
export const dispatchAfterOutboxWrites: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
	if (c.req.method === "GET" || c.req.method === "HEAD") return next();
	if (await noticingOutboxWrites(next)) {
		c.executionCtx.waitUntil(import("./dispatch").then(({ dispatchOutbox }) => dispatchOutbox(c.env)));
	}
};
