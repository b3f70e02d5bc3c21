/**
 * The plan that rates one subscription's billing period: the plan history's row for that period (a plan change
 * applies from the next period, so a period is always rated by one plan). Shared by real-time usage, upcoming
 * invoices and anything else that prices a single subscription outside a generation run. The subscription's
 * price overrides for that period are applied to the plan's charges.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";
import { ratePlans, subscriptionPlans, subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { effectivePlan } from "../pricing/effective-plan";
import { atVersion } from "../pricing/pinned-version";
import type { PriceOverride } from "../pricing/price-overrides";
import type { RatePlanRow } from "../pricing/rate-plans";

/**
 * The plan history row with the greatest effective period ≤ P; the subscription's own plan if it has none. P is
 * a period or a column of periods, the subscription that of the query (a column joined to subscriptions).
 */
export function planInEffect(
	period: string | SQLiteColumn,
	subscriptionId: SQLiteColumn = subscriptions.id,
): SQL {
	return sql`coalesce((
		SELECT ${subscriptionPlans.ratePlanId} FROM ${subscriptionPlans}
		WHERE ${subscriptionPlans.subscriptionId} = ${subscriptionId} AND ${subscriptionPlans.effectivePeriod} <= ${period}
		ORDER BY ${subscriptionPlans.effectivePeriod} DESC LIMIT 1
	), ${subscriptions.ratePlanId})`;
}

/** The version of planInEffect's plan for P (docs/plan-versions.md): the history row's, else the subscription's. */
export function versionInEffect(
	period: string | SQLiteColumn,
	subscriptionId: SQLiteColumn = subscriptions.id,
): SQL<number> {
	return sql<number>`coalesce((
		SELECT ${subscriptionPlans.ratePlanVersion} FROM ${subscriptionPlans}
		WHERE ${subscriptionPlans.subscriptionId} = ${subscriptionId} AND ${subscriptionPlans.effectivePeriod} <= ${period}
		ORDER BY ${subscriptionPlans.effectivePeriod} DESC LIMIT 1
	), ${subscriptions.ratePlanVersion})`;
}

/**
 * The prices of the version in effect for P, as JSON text for atVersion (null if it were missing). Read beside
 * the plan row it belongs to: `plan` is joined on planInEffect(P) in the same query.
 */
export function pinnedVersion(period: string | SQLiteColumn): SQL<string | null> {
	return sql<string | null>`(
		SELECT json_object('version', v.version, 'name', v.name, 'description', v.description,
			'base_fee', v.base_fee, 'minimum_amount', v.minimum_amount, 'prorate', v.prorate, 'charges', v.charges)
		FROM rate_plan_versions AS v
		WHERE v.environment = ${subscriptions.environment} AND v.rate_plan_id = ${planInEffect(period)}
			AND v.version = ${versionInEffect(period)}
	)`;
}

/**
 * The price overrides of the plan history row in effect for P (JSON text, or null: the plan's own prices), so a
 * period is rated by one set of prices (docs/discounts.md#negotiated-prices).
 */
export function overridesInEffect(
	period: string | SQLiteColumn,
	subscriptionId: SQLiteColumn = subscriptions.id,
): SQL<string | null> {
	return sql<string | null>`(
		SELECT ${subscriptionPlans.priceOverrides} FROM ${subscriptionPlans}
		WHERE ${subscriptionPlans.subscriptionId} = ${subscriptionId} AND ${subscriptionPlans.effectivePeriod} <= ${period}
		ORDER BY ${subscriptionPlans.effectivePeriod} DESC LIMIT 1
	)`;
}

/** A plan row as the subscription's overrides (JSON text from overridesInEffect) price it. */
export function planWithOverrides(
	plan: RatePlanRow,
	overrides: string | null | undefined,
	version?: string | null,
): RatePlanRow {
	const pinned = atVersion(plan, version);
	if (!overrides) return pinned;
	return effectivePlan(pinned, JSON.parse(overrides) as PriceOverride[]);
}

/** The query for the plan in effect for `period`; its result is empty for an unknown subscription. */
export function periodPlanQuery(db: Db, scope: Scope, subscriptionId: string, period: string) {
	return db
		.select({
			plan: ratePlans,
			overrides: overridesInEffect(period).as("plan_price_overrides"),
			version: pinnedVersion(period).as("plan_version"),
		})
		.from(subscriptions)
		.innerJoin(
			ratePlans,
			and(eq(ratePlans.id, planInEffect(period)), eq(ratePlans.environment, subscriptions.environment)),
		)
		.where(inScope(scope, subscriptions, eq(subscriptions.id, subscriptionId)));
}

export async function planForPeriod(
	db: Db,
	scope: Scope,
	subscriptionId: string,
	period: string,
): Promise<RatePlanRow | null> {
	const [row] = await periodPlanQuery(db, scope, subscriptionId, period);
	return row ? planWithOverrides(row.plan, row.overrides, row.version) : null;
}
