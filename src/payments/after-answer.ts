import type { MiddlewareHandler } from "hono";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { stripeSecretKey } from "../payment-provider/config";

const ISSUES_OR_CHANGES_INVOICES = /^\/v1\/(invoices|subscriptions|credit-notes)(\/|$)/;

/**
 * A write that may have issued, finalized, paid, voided or credited an invoice asks Stripe for what became due
 * (payments/collect.ts) once it has answered, never inside the answer. Environments without a Stripe key, reads
 * and refusals skip it; the collection code is loaded only when it runs.
 */
/** What the middleware reads of a request: the Worker's bindings and the scope the gate set. */
type AfterAnswerEnv = { Bindings: Env; Variables: { scope?: Scope } };

export const collectAfterInvoiceWrites: MiddlewareHandler<AfterAnswerEnv> = async (c, next) => {
	await next();
	if (c.req.method === "GET" || c.req.method === "HEAD" || c.res.status >= 400) return;
	if (!ISSUES_OR_CHANGES_INVOICES.test(c.req.path)) return;
	const scope = c.get("scope");
	if (scope === undefined || stripeSecretKey(c.env, scope.environment) === null) return;
	const origin = new URL(c.req.url).origin;
	c.executionCtx.waitUntil(
		import("./collect").then(({ collectDue }) => collectDue(c.env, scope.environment, origin)),
	);
};
