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
import { flushAccumulators, subscriptionAccumulators } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { missingRate } from "../exchange-rates/convert";
import { Decimal } from "../lib/decimal";
import { nowIso } from "../lib/time";
import { computeInvoice } from "./computed";
import { withConversions } from "./conversions";
import { loadPeriodStates, subscriptionsInPeriod } from "./load";

export async function accruedNotInvoiced({
	env,
	db,
	scope,
	accountId,
	window,
	currency,
}: {
	env: Env;
	db: Db;
	scope: Scope;
	accountId: string;
	window: PeriodWindow;
	/** Only subscriptions billed in this currency, converted at the rate in effect now (docs/currencies.md). */
	currency?: string;
}): Promise<Decimal> {
	const group = (await subscriptionsInPeriod(db, scope, window, accountId)).filter(
		(s) => currency === undefined || (s.billingCurrency ?? currency) === currency,
	);
	if (group.length === 0) return Decimal.ZERO;
	await flushAccumulators(
		env,
		group.flatMap((s) => subscriptionAccumulators(scope.environment, s.id, s.shards)),
	);
	const loaded = await loadPeriodStates(db, scope, window, group);
	const { ready: states, refused } = await withConversions(db, scope, loaded, nowIso());
	if (refused.length > 0) throw missingRate(refused);
	return Decimal.sum(states.map((state) => computeInvoice(state)?.amount ?? Decimal.ZERO));
}
