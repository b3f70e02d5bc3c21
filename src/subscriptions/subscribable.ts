/** The rules a rate plan must meet to be subscribed to (docs/billing.md#subscriptions). */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts, ratePlans } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict, notFound } from "../lib/errors";
import type { Charge } from "../pricing/charges";

export function accountQuery(db: Db, scope: Scope, id: string) {
	return db
		.select({ id: accounts.id, currency: accounts.currency })
		.from(accounts)
		.where(inScope(scope, accounts, eq(accounts.id, id)));
}

export function ratePlanQuery(db: Db, scope: Scope, id: string) {
	return db
		.select({
			id: ratePlans.id,
			currency: ratePlans.currency,
			status: ratePlans.status,
			charges: ratePlans.charges,
			version: ratePlans.version,
		})
		.from(ratePlans)
		.where(inScope(scope, ratePlans, eq(ratePlans.id, id)));
}

/**
 * Unknown plan → 404; archived → 409. A plan in another currency than the billing currency is fine: its invoices
 * are converted (docs/currencies.md). `current`: on a plan change, the current plan, whose currency it keeps.
 */
export function assertSubscribable(
	planId: string,
	plan: { currency: string; status: string } | undefined,
	current?: { id: string; currency: string },
): void {
	if (!plan) throw notFound("rate plan", planId);
	if (plan.status === "archived") {
		throw conflict(`Rate plan ${planId} is archived; it can no longer be subscribed to.`);
	}
	if (current !== undefined && plan.currency !== current.currency) {
		throw conflict(
			`Rate plan ${planId} is priced in ${plan.currency}, but the current plan ${current.id} is priced in ${current.currency}.`,
		);
	}
}

/**
 * A sharded subscription cannot have a plan with a unique_count charge (409): each shard knows only the distinct
 * values its own instances sent, so a value sent by instances of two shards would count twice. Count, sum, max
 * and filtered charges merge exactly (per instance, and an instance is in one shard).
 */
export function assertShardable(
	planId: string,
	plan: { charges: unknown } | undefined,
	shards: number,
): void {
	if (shards <= 1 || !plan) return;
	const distinct = (plan.charges as Charge[]).find((charge) => charge.source.aggregate === "unique_count");
	if (distinct) {
		throw conflict(
			`Rate plan ${planId} has a unique_count charge (${distinct.metric}), which a subscription with ${shards} ` +
				"shards cannot count exactly: distinct values are known per shard. Use shards: 1 for this plan.",
		);
	}
}
