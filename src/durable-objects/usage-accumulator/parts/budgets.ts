/**
 * The budgets a reservation must fit (reservations.ts): every block alert on the period's total amount, with what
 * was spent so far and what active holds keep, all in the subscription's billing currency (rates.ts).
 */
import { Decimal } from "../../../lib/decimal";
import { periodOf } from "../../../lib/time";
import type { AccumulatorIdentity } from "../identity";
import { periodValues } from "./alert-book";
import type { AccumulatorParts } from "./context";

/** The sum of the holds still active at `now`. */
export function heldTotal(sql: SqlStorage, now: number): Decimal {
	const rows = sql
		.exec<{ amount: string }>("SELECT amount FROM reservations WHERE status = 'held' AND expires_at > ?", now)
		.toArray();
	return Decimal.sum(rows.map((row) => Decimal.from(row.amount)));
}

/**
 * The budgets of the period with what was spent and held: what a reservation must fit. All in the billing
 * currency; `missingRate` when budgets exist but no rate converts the plan's amounts to it now.
 */
export async function budgetsNow(parts: AccumulatorParts, identity: AccumulatorIdentity, now: number) {
	const period = periodOf(new Date(now).toISOString());
	await parts.plans.learn(identity, [new Date(now).toISOString()]);
	const plan = parts.plans.planOf(period);
	const billing = plan === null ? null : parts.plans.billingOf(plan);
	return {
		currency: plan?.billing_currency ?? plan?.currency ?? "USD",
		/** Read inside the caller's transaction, after every await. */
		read: (at: number) => {
			const budgets = plan === null ? [] : parts.alerts.budgets();
			if (budgets.length === 0 || plan === null) return null;
			if (billing === null) {
				return { missingRate: { from: plan.currency, to: plan.billing_currency ?? plan.currency } };
			}
			const sql = parts.store.sql;
			return {
				budgets,
				// The period's total amount so far, as a spend alert compares it, in the billing currency.
				spent: periodValues(
					sql,
					plan,
					period,
					[{ metric: null }],
					identity.shard !== null,
					undefined,
					billing.conversion,
				).total,
				held: heldTotal(sql, at),
			};
		},
	};
}
