/**
 * GET /v1/accounts/{id}/balance (CONTRACT §17): what the account can spend, what its subscriptions have accrued
 * in the current period so far, and the difference. The accrual is rated exactly as GET /v1/usage rates a
 * subscription's current period (the accumulator's live aggregates, the plan in effect, pricing/rate.ts, base
 * fee included): one D1 read for the subscriptions and their plans, then the accumulators in parallel.
 */
import { eq, gte, isNull, or } from "drizzle-orm";
import { getAccount } from "../accounts/accounts";
import { lastDayOf } from "../billing-period/period";
import { database } from "../db/client";
import { ratePlans, subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { accumulatorStub, subscriptionAccumulators } from "../durable-objects/usage-accumulator/client";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import { nowIso, periodBounds, periodOf } from "../lib/time";
import { combineUsage } from "../metering/usage";
import { ratePlanPricing } from "../pricing/plans";
import { quantitiesForPlan } from "../pricing/quantities";
import { rateUsage } from "../pricing/rate";
import { availableCredit } from "./grants";

export interface BalanceView {
	account_id: string;
	currency: string;
	available: number;
	pending_usage: number;
	projected: number;
}

export async function accountBalance({
	env,
	scope,
	accountId,
}: {
	env: Env;
	scope: Scope;
	accountId: string;
}): Promise<BalanceView> {
	const db = database(env.DB);
	const account = await getAccount({ db, scope, id: accountId });
	const period = periodOf(nowIso());
	const [available, pending] = await Promise.all([
		availableCredit(db, scope, accountId, account.currency),
		pendingUsage(env, scope, accountId, period),
	]);
	return {
		account_id: accountId,
		currency: account.currency,
		available: available.toNumber(),
		pending_usage: pending.toNumber(),
		projected: available.sub(pending).toNumber(),
	};
}

/** The current period so far, rated, of every subscription of the account active at some time in it. */
async function pendingUsage(env: Env, scope: Scope, accountId: string, period: string): Promise<Decimal> {
	const db = database(env.DB);
	const { start } = periodBounds(period);
	const rows = await db
		.select({ id: subscriptions.id, shards: subscriptions.shards, plan: ratePlans })
		.from(subscriptions)
		.innerJoin(ratePlans, eq(ratePlans.id, subscriptions.ratePlanId))
		.where(
			inScope(
				scope,
				subscriptions,
				eq(subscriptions.accountId, accountId),
				or(isNull(subscriptions.cancelledAt), gte(subscriptions.cancelledAt, start)),
			),
		);
	const totals = await Promise.all(
		rows.map(async ({ id, shards, plan }) => {
			const thisPeriod = combineUsage(
				await Promise.all(
					subscriptionAccumulators(scope.environment, id, shards).map(async (name) => {
						const [usage = []] = await accumulatorStub(env, name).usageOf([
							{ startDay: `${period}-01`, endDay: lastDayOf(period) },
						]);
						return usage;
					}),
				),
			);
			const pricing = ratePlanPricing(plan);
			return rateUsage(pricing, quantitiesForPlan(pricing.charges, thisPeriod)).total;
		}),
	);
	return Decimal.sum(totals);
}
