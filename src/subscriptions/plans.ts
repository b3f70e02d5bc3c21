/** The rules a rate plan must meet to be subscribed to (§9). */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts, ratePlans } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict, notFound } from "../http/errors";

export function accountQuery(db: Db, scope: Scope, id: string) {
	return db
		.select({ id: accounts.id, currency: accounts.currency })
		.from(accounts)
		.where(inScope(scope, accounts, eq(accounts.id, id)));
}

export function ratePlanQuery(db: Db, scope: Scope, id: string) {
	return db
		.select({ id: ratePlans.id, currency: ratePlans.currency, status: ratePlans.status })
		.from(ratePlans)
		.where(inScope(scope, ratePlans, eq(ratePlans.id, id)));
}

/** Unknown plan → 404; archived, or priced in another currency than the account's → 409. */
export function assertSubscribable(
	planId: string,
	plan: { currency: string; status: string } | undefined,
	account: { id: string; currency: string },
): void {
	if (!plan) throw notFound("rate plan", planId);
	if (plan.status === "archived") {
		throw conflict(`Rate plan ${planId} is archived; it can no longer be subscribed to.`);
	}
	if (plan.currency !== account.currency) {
		throw conflict(
			`Rate plan ${planId} is priced in ${plan.currency}, but account ${account.id} is billed in ${account.currency}.`,
		);
	}
}
