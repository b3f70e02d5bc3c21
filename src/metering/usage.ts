/**
 * GET /v1/usage, answered in real time from the accumulators (not from D1, which lags by a flush).
 * An instance's usage may sit in several accumulators — its own, and one per subscription it has been in — so a
 * read by agent_key asks each of them for that instance (of a sharded subscription, the instance's shard). A read
 * by subscription asks the subscription's accumulators (every shard, in parallel, added up), and also prices one
 * billing period — the one asked for, so far — with the plan of that period; the answer never mixes two periods
 * (docs/metering.md#reading-usage).
 */

import { activeSpan } from "../billing-period/activity";
import { lastDayOf, periodWindow } from "../billing-period/period";
import { planForPeriod } from "../billing-period/plan-in-effect";
import { baseFeeProration, rateWithProration } from "../billing-period/proration";
import { periodDiscountOf } from "../coupons/discounts-read";
import type { WithEnv } from "../db/rows";
import {
	accumulatorName,
	subscriptionAccumulators,
	usageAccumulator,
} from "../durable-objects/usage-accumulator/handle";
import type { UsageQuery } from "../durable-objects/usage-accumulator/types";
import type { Env } from "../env";
import { requireConversion } from "../exchange-rates/convert";
import { convertRated } from "../exchange-rates/rated";
import { Decimal } from "../lib/decimal";
import { nowIso } from "../lib/time";
import { withDiscount } from "../pricing/period-discount";
import type { UsageAggregate } from "../pricing/quantities";
import { quantitiesForPlan } from "../pricing/quantities";
import { type RatedUsageJson, ratedUsageToJson } from "../pricing/rate";
import { ratePlanPricing } from "../pricing/rate-plans";
import { subscriptionAccumulatorsOf } from "../subscriptions/memberships";
import { getSubscription } from "../subscriptions/views";
import { splitUsageCharges } from "./split-usage";

export interface UsageLine {
	kind: "action" | "outcome";
	type: string;
	count: number;
	/** Sum of outcome values; null for actions. */
	value: number | null;
}

export interface UsageReport {
	start_date: string;
	end_date: string;
	usage: UsageLine[];
}

export interface SubscriptionUsageReport extends UsageReport, RatedUsageJson {
	subscription_id: string;
	rate_plan_id: string;
	billing_period: string;
}

/** Adds up aggregates of the same kind, type and field. */
export function combineUsage(parts: UsageAggregate[][]): UsageAggregate[] {
	const totals = new Map<string, { row: UsageAggregate; count: number; sum: Decimal }>();
	for (const row of parts.flat()) {
		const key = JSON.stringify([row.kind, row.type, row.field]);
		const entry = totals.get(key) ?? { row, count: 0, sum: Decimal.ZERO };
		entry.count += row.count;
		entry.sum = entry.sum.add(Decimal.from(row.sum));
		totals.set(key, entry);
	}
	return [...totals.values()].map(({ row, count, sum }) => ({ ...row, count, sum: sum.toString() }));
}

function usageLines(aggregates: UsageAggregate[]): UsageLine[] {
	return aggregates
		.filter((row) => row.field === "")
		.map((row) => ({
			kind: row.kind,
			type: row.type,
			count: row.count,
			value: row.kind === "outcome" ? Decimal.from(row.sum).toNumber() : null,
		}))
		.sort((a, b) =>
			a.kind === b.kind ? (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) : a.kind < b.kind ? -1 : 1,
		);
}

export async function readUsage({
	env,
	db,
	scope,
	agentKey,
	subscriptionId,
	period,
	startDay,
	endDay,
}: WithEnv & {
	agentKey?: string;
	subscriptionId?: string;
	/** The billing period whose charges a read by subscription shows. */
	period: string;
	startDay: string;
	endDay: string;
}): Promise<UsageReport | SubscriptionUsageReport> {
	if (subscriptionId === undefined) {
		const usageIn = (name: string) =>
			usageAccumulator(env, name).countedUsage({ startDay, endDay, agentKey });
		// The instance's own accumulator is asked while D1 tells which subscriptions it has been in.
		const [own, names] = await Promise.all([
			usageIn(accumulatorName(scope.environment, { agentKey: agentKey as string })),
			subscriptionAccumulatorsOf(db, scope, agentKey as string),
		]);
		const parts = await Promise.all(names.map(usageIn));
		return { start_date: startDay, end_date: endDay, usage: usageLines(combineUsage([own, ...parts])) };
	}

	const [subscription, plan, discount] = await Promise.all([
		getSubscription({ db, scope, id: subscriptionId }),
		planForPeriod(db, scope, subscriptionId, period),
		periodDiscountOf(db, scope, subscriptionId, period),
	]);
	const { inRange, thisPeriod, metrics } = await subscriptionUsage(
		env,
		subscriptionAccumulators(scope.environment, subscriptionId, subscription.shards),
		{ startDay, endDay, agentKey },
		period,
	);
	if (!plan) throw new Error(`Subscription ${subscriptionId} has no plan for ${period}`);
	const pricing = ratePlanPricing(plan);
	const window = periodWindow(period);
	const lifetime = {
		startedAt: subscription.started_at,
		endsAt: subscription.cancelled_at ?? subscription.cancel_at,
	};
	// In the billing currency, converted at the rate in effect now (docs/currencies.md); none → 409 naming the pair.
	const billing = subscription.billing_currency;
	const conversion =
		billing === plan.currency ? null : await requireConversion(db, scope, plan.currency, billing, nowIso());
	// A period the subscription was never active in is billed nothing, so it shows no charges.
	let rated: ReturnType<typeof ratedUsageToJson> = { currency: billing, charges: [], total: 0 };
	// A period split by plan changes "now": each part's charges (split-usage.ts).
	const split = activeSpan(window, lifetime)
		? await splitUsageCharges({
				env,
				db,
				scope,
				subscriptionId,
				accumulators: subscriptionAccumulators(scope.environment, subscriptionId, subscription.shards),
				window,
				plan,
				metrics,
				lifetime,
				conversion,
				discount,
			})
		: null;
	if (split !== null) rated = split;
	else if (activeSpan(window, lifetime)) {
		const inPlanCurrency = rateWithProration(
			pricing,
			quantitiesForPlan(pricing.charges, thisPeriod, metrics),
			baseFeeProration(plan.prorate, window, lifetime),
		);
		const converted =
			conversion === null ? inPlanCurrency : convertRated(inPlanCurrency, pricing, conversion).rated;
		rated = ratedUsageToJson(withDiscount(converted, discount));
	}
	return {
		start_date: startDay,
		end_date: endDay,
		usage: usageLines(inRange),
		subscription_id: subscriptionId,
		rate_plan_id: plan.id,
		billing_period: period,
		...rated,
	};
}

/**
 * A subscription's usage in the range, its usage and metrics in the period, from all its accumulators at once.
 * Shards count disjoint instances: their aggregates add up, and their metrics are per instance already.
 */
export async function subscriptionUsage(env: Env, names: string[], range: UsageQuery, period: string) {
	const parts = await Promise.all(
		names.map(async (name) => {
			const accumulator = usageAccumulator(env, name);
			const [[inRange = [], thisPeriod = []], metrics] = await Promise.all([
				accumulator.billableUsage([range, { startDay: `${period}-01`, endDay: lastDayOf(period) }]),
				accumulator.metrics(period),
			]);
			return { inRange, thisPeriod, metrics };
		}),
	);
	if (parts.length === 1) return parts[0] as (typeof parts)[number];
	return {
		inRange: combineUsage(parts.map((part) => part.inRange)),
		thisPeriod: combineUsage(parts.map((part) => part.thisPeriod)),
		metrics: parts.flatMap((part) => part.metrics),
	};
}
