/**
 * Reads everything invoicing needs about a group of subscriptions for one period in one D1 round trip: the plan
 * in effect, the period's usage added up per agent, and the invoices already issued. Ids travel as one JSON
 * parameter (json_each), so a group costs the same few statements whatever its size, and no statement nears
 * D1's 100 bound parameters.
 */
import { and, asc, eq, gt, gte, isNull, lt, ne, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { PeriodWindow } from "../billing-period/period";
import {
	overridesInEffect,
	pinnedVersion,
	planInEffect,
	planWithOverrides,
} from "../billing-period/plan-in-effect";
import { baseFeeProration } from "../billing-period/proration";
import type { Db } from "../db/client";
import {
	agentInstances,
	invoiceLines,
	invoices,
	ratePlans,
	subscriptionPlanParts,
	subscriptions,
	usageDaily,
	usageMetrics,
} from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { DISCOUNT_METRIC, discountInEffect, parseDiscount } from "../pricing/period-discount";
import { billedLines } from "./billed-lines";
import type { AgentMetric, AgentUsage, BilledLine, SubscriptionPeriodState } from "./computed";
import { ONE_OFF_METRIC } from "./one-off-lines";
import { usageByAgent, withPeriodParts } from "./period-parts";

export interface SubscriptionInPeriod {
	id: string;
	accountId: string;
	startedAt: string;
	/** cancelled_at, or cancel_at when a cancellation at period end is scheduled. */
	endsAt: string | null;
	/** Its usage accumulators, flushed before rating; D1 keeps their rows apart and sums them by subscription. */
	shards: number;
	/** The currency its invoices are in (docs/currencies.md); null for a row older than the column. */
	billingCurrency?: string | null;
}

function isOneOf(column: SQLiteColumn, ids: readonly string[]): SQL {
	return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** Subscriptions active at some time in the period: started before its end, not cancelled by its start. */
export async function subscriptionsInPeriod(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	accountId?: string,
): Promise<SubscriptionInPeriod[]> {
	return db
		.select({
			id: subscriptions.id,
			accountId: subscriptions.accountId,
			startedAt: subscriptions.startedAt,
			endsAt: sql<string | null>`coalesce(${subscriptions.cancelledAt}, ${subscriptions.cancelAt})`,
			shards: subscriptions.shards,
			billingCurrency: subscriptions.billingCurrency,
		})
		.from(subscriptions)
		.where(
			inScope(
				scope,
				subscriptions,
				accountId === undefined ? undefined : eq(subscriptions.accountId, accountId),
				lt(subscriptions.startedAt, window.end),
				or(isNull(subscriptions.cancelledAt), gt(subscriptions.cancelledAt, window.start)),
				// Due to be cancelled before the period (the cron has not come by yet): not in it.
				or(isNull(subscriptions.cancelAt), gt(subscriptions.cancelAt, window.start)),
			),
		)
		.orderBy(asc(subscriptions.createdAt), asc(subscriptions.id));
}

export async function loadPeriodStates(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	group: readonly SubscriptionInPeriod[],
): Promise<SubscriptionPeriodState[]> {
	const ids = group.map((s) => s.id);
	const [plans, usage, issued, billed, metrics, parts] = await db.batch([
		db
			// Aliased: in a batch drizzle maps columns by name, and both tables have an "id".
			.select({
				subscriptionId: sql<string>`${subscriptions.id}`.as("plan_subscription_id"),
				plan: ratePlans,
				// The subscription's negotiated prices and coupon for the period (docs/discounts.md).
				overrides: overridesInEffect(window.period).as("plan_price_overrides"),
				discount: discountInEffect(window.period).as("plan_discount"),
				// The subscription's version of the plan (docs/plan-versions.md).
				version: pinnedVersion(window.period).as("plan_version"),
			})
			.from(subscriptions)
			.innerJoin(
				ratePlans,
				and(
					eq(ratePlans.id, planInEffect(window.period)),
					eq(ratePlans.environment, subscriptions.environment),
				),
			)
			.where(inScope(scope, subscriptions, isOneOf(subscriptions.id, ids))),
		// Added up in SQL per agent: counts are integers, decimal sums come back as a JSON array of exact strings.
		usageByAgent(
			db,
			scope,
			usageDaily,
			ids,
			{
				kind: usageDaily.kind,
				type: usageDaily.type,
				field: usageDaily.field,
				count: sql<number>`sum(${usageDaily.count})`,
				sums: sql<string>`json_group_array(${usageDaily.sum})`,
			},
			gte(usageDaily.day, window.firstDay),
			lt(usageDaily.day, window.endDay),
		).groupBy(
			usageDaily.subscriptionId,
			agentInstances.agentId,
			usageDaily.kind,
			usageDaily.type,
			usageDaily.field,
		),
		db
			.select({
				subscriptionId: invoices.subscriptionId,
				sequence: invoices.sequence,
				status: invoices.status,
				issuedAt: invoices.issuedAt,
				kind: invoices.kind,
				thresholdSequence: invoices.thresholdSequence,
				discountCredited: invoices.discountCredited,
			})
			.from(invoices)
			.where(
				inScope(
					scope,
					invoices,
					eq(invoices.billingPeriod, window.period),
					isOneOf(invoices.subscriptionId, ids),
				),
			),
		billedLines(
			db,
			scope,
			{
				subscriptionId: invoices.subscriptionId,
				quantity: invoiceLines.quantity,
				kind: invoices.kind,
				originalAmount: invoiceLines.originalAmount,
				partStartsAt: invoiceLines.partStartsAt,
			},
			eq(invoices.billingPeriod, window.period),
			isOneOf(invoices.subscriptionId, ids),
			// Lines added by hand are billed once, outside what usage is compared with (one-off-lines.ts).
			ne(invoiceLines.metric, ONE_OFF_METRIC),
		),
		// Filtered, max and unique_count sources (docs/pricing.md#filters-aggregations-and-minimums), per agent; combined per source in JS (max or sum).
		usageByAgent(
			db,
			scope,
			usageMetrics,
			ids,
			{ source: usageMetrics.source, quantity: usageMetrics.quantity },
			eq(usageMetrics.period, window.period),
		),
		// The earlier parts of periods split by plan changes "now" (period-parts.ts).
		db
			.select()
			.from(subscriptionPlanParts)
			.where(
				and(
					isOneOf(subscriptionPlanParts.subscriptionId, ids),
					eq(subscriptionPlanParts.period, window.period),
				),
			),
	]);

	const planOf = new Map(
		plans.map((row) => [row.subscriptionId, planWithOverrides(row.plan, row.overrides, row.version)]),
	);
	const discountOf = new Map(plans.map((row) => [row.subscriptionId, parseDiscount(row.discount)]));
	const usageOf = groupBy(
		usage.map((row): AgentUsage & { subscriptionId: string | null } => ({
			subscriptionId: row.subscriptionId,
			agentId: row.agentId ?? null,
			kind: row.kind,
			type: row.type,
			field: row.field,
			count: Number(row.count),
			sum: Decimal.sum((JSON.parse(row.sums) as string[]).map((s) => Decimal.from(s))).toString(),
		})),
	);
	const metricsOf = groupBy(
		metrics.map((row): AgentMetric & { subscriptionId: string | null } => ({
			subscriptionId: row.subscriptionId,
			agentId: row.agentId ?? null,
			source: row.source,
			quantity: row.quantity,
		})),
	);
	const issuedOf = groupBy(issued);
	const billedOf = groupBy(billed);

	const states = group.flatMap((subscription): SubscriptionPeriodState[] => {
		const plan = planOf.get(subscription.id);
		// A subscription always has a plan of its environment; skipping beats failing the whole run if not.
		if (!plan) return [];
		const earlier = issuedOf.get(subscription.id) ?? [];
		return [
			{
				subscriptionId: subscription.id,
				accountId: subscription.accountId,
				plan,
				usage: usageOf.get(subscription.id) ?? [],
				metrics: metricsOf.get(subscription.id) ?? [],
				sequences: earlier.map((invoice) => invoice.sequence),
				// Threshold invoices do not count: the regular invoice bills the rest (threshold-rest.ts).
				invoiced: earlier.some((invoice) => invoice.status !== "void" && invoice.kind !== "threshold"),
				thresholdSequences: earlier.flatMap((invoice) => invoice.thresholdSequence ?? []),
				invoicedWhileOpen: earlier.some(
					(invoice) => invoice.status !== "void" && invoice.issuedAt < window.end,
				),
				billedLines: [
					...((billedOf.get(subscription.id) ?? []) as BilledLine[]),
					...discountsCredited(earlier),
				],
				thresholdLines: (billedOf.get(subscription.id) ?? []).filter((line) => line.kind === "threshold"),
				baseFeeProration: baseFeeProration(plan.prorate, window, {
					startedAt: subscription.startedAt,
					endsAt: subscription.endsAt,
				}),
				discount: discountOf.get(subscription.id) ?? null,
				billingCurrency: subscription.billingCurrency ?? plan.currency,
			},
		];
	});
	const lifetimes = new Map(group.map((s) => [s.id, { startedAt: s.startedAt, endsAt: s.endsAt }]));
	return withPeriodParts(states, { db, scope, window, rows: parts, lifetimes });
}

function groupBy<T extends { subscriptionId: string | null }>(rows: T[]): Map<string | null, T[]> {
	const groups = new Map<string | null, T[]>();
	for (const row of rows) {
		const list = groups.get(row.subscriptionId);
		if (list) list.push(row);
		else groups.set(row.subscriptionId, [row]);
	}
	return groups;
}

/**
 * What regular invoices' discounts left over and granted as credits (threshold-rest.ts): billed discount too, so
 * that a supplementary invoice does not grant it again.
 */
function discountsCredited(earlier: readonly { status: string; discountCredited: string }[]): BilledLine[] {
	return earlier
		.filter((invoice) => invoice.status !== "void" && !Decimal.from(invoice.discountCredited).isZero())
		.map((invoice) => ({
			metric: DISCOUNT_METRIC,
			quantity: "0",
			amount: invoice.discountCredited,
			agentShares: null,
		}));
}
