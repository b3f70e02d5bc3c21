/**
 * Reading subscriptions. subscription_plans is the plan history and the truth: the plan of the current period
 * is its newest row whose effective_period has started, a later row is the pending plan. The rate_plan_id and
 * pending_rate_plan_id columns of subscriptions repeat that for plain SQL readers and are brought up to date
 * when a read finds that a pending plan's period has begun.
 */
import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Listing } from "../db/rows";
import { subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { notFound } from "../lib/errors";
import { DEFAULT_CURRENCY } from "../lib/money";
import { nowIso, periodBounds, periodOf } from "../lib/time";
import type { PriceOverride } from "../pricing/price-overrides";

export type SubscriptionStatus = "active" | "cancelled";

export interface SubscriptionView {
	id: string;
	account_id: string;
	rate_plan_id: string;
	/** The version of rate_plan_id that rates the current period (docs/plan-versions.md). */
	rate_plan_version: number;
	pending_rate_plan_id: string | null;
	/** A change of plan or version from the next period on; its rate_plan_id is pending_rate_plan_id. */
	pending_plan_change: PendingPlanChange | null;
	agent_instance_ids: string[];
	status: SubscriptionStatus;
	started_at: string;
	cancelled_at: string | null;
	/** Set by a cancellation at period end: the instant the cron cancels it (docs/billing.md#subscription-lifecycle). */
	cancel_at: string | null;
	/** How many usage accumulators count its events; fixed at creation. */
	shards: number;
	/** The currency its invoices are in (docs/currencies.md); fixed at creation. */
	billing_currency: string;
	/** Negotiated prices of the current period ([] when it is rated at the plan's prices). */
	price_overrides: PriceOverride[];
	/** Negotiated prices from the next period on, when they differ from the current ones; else null. */
	pending_price_overrides: PriceOverride[] | null;
	/** The coupon applied to the current period or a later one, if any (docs/discounts.md). */
	discount: SubscriptionDiscountView | null;
	/** The usage amount that makes a threshold invoice (docs/thresholds-and-recurring-credits.md); null: none. */
	invoicing_threshold: number | null;
	created_at: string;
}

export interface PendingPlanChange {
	rate_plan_id: string;
	version: number;
	/** The instant it takes effect: the first instant of its billing period. */
	at: string;
}

export interface SubscriptionDiscountView {
	id: string;
	coupon_id: string;
	subscription_id: string;
	start_period: string;
	end_period: string | null;
	created_at: string;
}

/** A subscription as read, with what a write needs to detect that it changed meanwhile. */
export interface LoadedSubscription {
	view: SubscriptionView;
	updatedAt: string;
}

/** The `data` of subscription.created / .updated / .cancelled webhook events (docs/webhooks.md#what-a-delivery-looks-like). */
export function subscriptionEventData(view: SubscriptionView) {
	return {
		subscription_id: view.id,
		account_id: view.account_id,
		rate_plan_id: view.rate_plan_id,
		rate_plan_version: view.rate_plan_version,
		pending_rate_plan_id: view.pending_rate_plan_id,
		pending_plan_change: view.pending_plan_change,
		agent_instance_ids: view.agent_instance_ids,
		status: view.status,
		billing_currency: view.billing_currency,
	};
}

/** A column of the next period's history row, when its plan or version differs from the current period's. */
function pendingColumn<T>(column: string, period: string) {
	return sql<T | null>`(SELECT n.${sql.raw(column)} FROM subscription_plans AS n
		WHERE n.subscription_id = "subscriptions"."id" AND n.effective_period > ${period}
			AND n.rate_plan_id || ' ' || n.rate_plan_version IS NOT coalesce((
				SELECT p.rate_plan_id || ' ' || p.rate_plan_version FROM subscription_plans AS p
				WHERE p.subscription_id = "subscriptions"."id" AND p.effective_period <= ${period}
				ORDER BY p.effective_period DESC LIMIT 1),
				"subscriptions"."rate_plan_id" || ' ' || "subscriptions"."rate_plan_version")
		ORDER BY n.effective_period LIMIT 1)`;
}

// Outer columns are spelled out: drizzle writes a bare "id" in single-table queries, which inside a subquery
// would mean the subquery's own id.
function selection(period: string) {
	return {
		row: subscriptions,
		currentPlan: sql<string | null>`(SELECT p.rate_plan_id FROM subscription_plans AS p
			WHERE p.subscription_id = "subscriptions"."id" AND p.effective_period <= ${period}
			ORDER BY p.effective_period DESC LIMIT 1)`,
		currentVersion: sql<number | null>`(SELECT p.rate_plan_version FROM subscription_plans AS p
			WHERE p.subscription_id = "subscriptions"."id" AND p.effective_period <= ${period}
			ORDER BY p.effective_period DESC LIMIT 1)`,
		// A next-period row that only changes the negotiated prices keeps the plan and version: no change is pending.
		pendingPlan: pendingColumn<string>("rate_plan_id", period),
		pendingVersion: pendingColumn<number>("rate_plan_version", period),
		pendingPeriod: pendingColumn<string>("effective_period", period),
		currentOverrides: sql<string | null>`(SELECT p.price_overrides FROM subscription_plans AS p
			WHERE p.subscription_id = "subscriptions"."id" AND p.effective_period <= ${period}
			ORDER BY p.effective_period DESC LIMIT 1)`,
		// The next row's prices, '[]' for none; null when there is no next row.
		nextOverrides: sql<string | null>`(SELECT coalesce(p.price_overrides, '[]') FROM subscription_plans AS p
			WHERE p.subscription_id = "subscriptions"."id" AND p.effective_period > ${period}
			ORDER BY p.effective_period LIMIT 1)`,
		discount: sql<string | null>`(SELECT json_object('id', d.id, 'coupon_id', d.coupon_id,
			'subscription_id', d.subscription_id, 'start_period', d.start_period, 'end_period', d.end_period,
			'created_at', d.created_at) FROM subscription_discounts AS d
			WHERE d.subscription_id = "subscriptions"."id" AND (d.end_period IS NULL OR d.end_period >= ${period})
			ORDER BY d.start_period DESC, d.id DESC LIMIT 1)`,
		// Active: its open memberships. Cancelled: those it had when cancelled (closed at that very instant).
		instanceKeys: sql<string>`(SELECT json_group_array(m.agent_key ORDER BY m.id) FROM subscription_instances AS m
			WHERE m.subscription_id = "subscriptions"."id"
			AND (m.removed_at IS NULL OR m.removed_at = "subscriptions"."cancelled_at"))`,
	};
}

type Selected = {
	row: typeof subscriptions.$inferSelect;
	currentPlan: string | null;
	currentVersion: number | null;
	pendingPlan: string | null;
	pendingVersion: number | null;
	pendingPeriod: string | null;
	currentOverrides: string | null;
	nextOverrides: string | null;
	discount: string | null;
	instanceKeys: string;
};

function toLoaded({
	row,
	currentPlan,
	currentVersion,
	pendingPlan,
	pendingVersion,
	pendingPeriod,
	currentOverrides,
	nextOverrides,
	discount,
	instanceKeys,
}: Selected): LoadedSubscription {
	const current = currentOverrides ?? "[]";
	return {
		updatedAt: row.updatedAt,
		view: {
			id: row.id,
			account_id: row.accountId,
			rate_plan_id: currentPlan ?? row.ratePlanId,
			rate_plan_version: currentVersion ?? row.ratePlanVersion,
			pending_rate_plan_id: pendingPlan,
			pending_plan_change:
				pendingPlan === null
					? null
					: {
							rate_plan_id: pendingPlan,
							version: Number(pendingVersion),
							at: periodBounds(pendingPeriod as string).start,
						},
			agent_instance_ids: JSON.parse(instanceKeys) as string[],
			status: row.status,
			started_at: row.startedAt,
			cancelled_at: row.cancelledAt,
			cancel_at: row.cancelAt,
			shards: row.shards,
			billing_currency: row.billingCurrency ?? DEFAULT_CURRENCY,
			price_overrides: JSON.parse(current) as PriceOverride[],
			pending_price_overrides:
				nextOverrides === null || nextOverrides === current
					? null
					: (JSON.parse(nextOverrides) as PriceOverride[]),
			discount: discount === null ? null : (JSON.parse(discount) as SubscriptionDiscountView),
			invoicing_threshold: thresholdOf(row.invoicingThreshold),
			created_at: row.createdAt,
		},
	};
}

const thresholdOf = (stored: string | null) => (stored === null ? null : Decimal.from(stored).toNumber());

/** Rolls the plan columns forward for subscriptions whose pending plan's period has begun. Rare: once a change. */
async function syncPlanColumns(db: Db, selected: Selected[], period: string): Promise<void> {
	const stale = selected.filter(
		(s) =>
			s.currentPlan !== null &&
			(s.currentPlan !== s.row.ratePlanId ||
				s.currentVersion !== s.row.ratePlanVersion ||
				s.pendingPlan !== s.row.pendingRatePlanId),
	);
	if (stale.length === 0) return;
	const current = selection(period);
	await db
		.update(subscriptions)
		.set({
			ratePlanId: current.currentPlan,
			ratePlanVersion: current.currentVersion,
			pendingRatePlanId: current.pendingPlan,
		})
		.where(
			sql`"subscriptions"."id" IN (SELECT value FROM json_each(${JSON.stringify(stale.map((s) => s.row.id))}))`,
		);
}

export async function loadSubscription(db: Db, scope: Scope, id: string): Promise<LoadedSubscription> {
	const period = periodOf(nowIso());
	const rows = await db
		.select(selection(period))
		.from(subscriptions)
		.where(inScope(scope, subscriptions, eq(subscriptions.id, id)));
	if (!rows[0]) throw notFound("subscription", id);
	await syncPlanColumns(db, rows, period);
	return toLoaded(rows[0]);
}

export async function getSubscription({ db, scope, id }: { db: Db; scope: Scope; id: string }) {
	return (await loadSubscription(db, scope, id)).view;
}

export async function listSubscriptions({
	db,
	scope,
	filters,
	limit,
	offset,
}: Listing<{ account_id?: string; status?: SubscriptionStatus }>): Promise<{
	items: SubscriptionView[];
	total: number;
}> {
	const period = periodOf(nowIso());
	const conditions: SQL[] = [];
	if (filters.account_id !== undefined) conditions.push(eq(subscriptions.accountId, filters.account_id));
	if (filters.status !== undefined) conditions.push(eq(subscriptions.status, filters.status));
	const where = inScope(scope, subscriptions, and(...conditions));
	const [rows, [count]] = await db.batch([
		db
			.select(selection(period))
			.from(subscriptions)
			.where(where)
			.orderBy(desc(subscriptions.createdAt), desc(subscriptions.id))
			.limit(limit)
			.offset(offset),
		db.select({ n: sql<number>`count(*)` }).from(subscriptions).where(where),
	]);
	await syncPlanColumns(db, rows, period);
	return { items: rows.map((row) => toLoaded(row).view), total: count?.n ?? 0 };
}
