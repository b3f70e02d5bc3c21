/**
 * What an account's subscriptions have accrued in the current period and no invoice has billed yet: for each
 * subscription active in it, the invoice that generating the period now would add — the whole period rated
 * (base fee, proration, minimums), less what its invoices already billed, exactly as a supplementary invoice
 * computes it. Right after the period is invoiced, with no new usage, that is 0. Read like the upcoming invoice:
 * the accumulators are flushed first, then the same loader and draft as generation, nothing stored.
 */

import type { PeriodWindow } from "../billing-period/period";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { flushAccumulators, subscriptionAccumulators } from "../durable-objects/usage-accumulator/client";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import { draftInvoice } from "./draft";
import { loadPeriodStates, subscriptionsInPeriod } from "./load";

export async function accruedNotInvoiced({
	env,
	db,
	scope,
	accountId,
	window,
}: {
	env: Env;
	db: Db;
	scope: Scope;
	accountId: string;
	window: PeriodWindow;
}): Promise<Decimal> {
	const group = await subscriptionsInPeriod(db, scope, window, accountId);
	if (group.length === 0) return Decimal.ZERO;
	await flushAccumulators(
		env,
		group.flatMap((s) => subscriptionAccumulators(scope.environment, s.id, s.shards)),
	);
	const states = await loadPeriodStates(db, scope, window, group);
	return Decimal.sum(states.map((state) => draftInvoice(state)?.amount ?? Decimal.ZERO));
}
