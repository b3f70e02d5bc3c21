/**
 * The plan a subscription is priced by in the current billing period, with its negotiated prices applied, and the
 * discount that covers the period: what POST /v1/pricing/simulate prices when it is given a subscription, so that
 * the quote is what the period's invoice would bill for that usage. The same rule as billing-period/plan-in-effect.ts (the
 * plan history row with the greatest effective period ≤ now, else the subscription's own plan, at the version it
 * names), read here
 * because rating must not depend on the billing-period module that depends on it.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { notFound } from "../lib/errors";
import { nowIso, periodOf } from "../lib/time";
import { effectivePlan } from "./effective-plan";
import { discountInEffect, type PeriodDiscount, parseDiscount } from "./period-discount";
import type { PriceOverride } from "./price-overrides";
import type { RatePlanRow } from "./rate-plans";

interface Row {
	id: string;
	environment: string;
	name: string;
	description: string | null;
	currency: string;
	base_fee: string;
	charges: string;
	status: "active" | "archived";
	minimum_amount: string;
	created_at: string;
	prorate: number;
	version: number;
	price_overrides: string | null;
	discount: string | null;
}

export async function subscriptionPlanNow(
	db: Db,
	scope: Scope,
	subscriptionId: string,
): Promise<{ plan: RatePlanRow; discount: PeriodDiscount | null }> {
	const period = periodOf(nowIso());
	const [row] = await db.all<Row>(sql`
		WITH h AS (
			SELECT sp.rate_plan_id, sp.rate_plan_version, sp.price_overrides FROM subscriptions AS s
			JOIN subscription_plans AS sp ON sp.subscription_id = s.id AND sp.effective_period <= ${period}
			WHERE s.environment = ${scope.environment} AND s.id = ${subscriptionId}
			ORDER BY sp.effective_period DESC LIMIT 1
		)
		SELECT p.id, p.environment, p.status, v.version, v.name, v.description, v.currency, v.base_fee, v.charges,
			v.minimum_amount, v.created_at, v.prorate,
			(SELECT price_overrides FROM h) AS price_overrides, ${discountInEffect(period)} AS discount
		FROM subscriptions
		JOIN rate_plans AS p ON p.environment = subscriptions.environment
			AND p.id = coalesce((SELECT rate_plan_id FROM h), subscriptions.rate_plan_id)
		-- The subscription's version of the plan (docs/plan-versions.md).
		JOIN rate_plan_versions AS v ON v.environment = p.environment AND v.rate_plan_id = p.id
			AND v.version = coalesce((SELECT rate_plan_version FROM h), subscriptions.rate_plan_version)
		WHERE subscriptions.environment = ${scope.environment} AND subscriptions.id = ${subscriptionId}`);
	if (!row) throw notFound("subscription", subscriptionId);
	const plan: RatePlanRow = {
		id: row.id,
		environment: row.environment,
		name: row.name,
		description: row.description,
		currency: row.currency,
		baseFee: row.base_fee,
		charges: JSON.parse(row.charges) as unknown[],
		status: row.status,
		minimumAmount: row.minimum_amount,
		createdAt: row.created_at,
		prorate: row.prorate === 1,
		version: row.version,
	};
	const overrides = row.price_overrides ? (JSON.parse(row.price_overrides) as PriceOverride[]) : null;
	return { plan: effectivePlan(plan, overrides), discount: parseDiscount(row.discount) };
}
