/**
 * POST /v1/subscriptions/{id}/change-plan with `at: "now"` (docs/plan-versions.md#changing-now): the current
 * billing period splits at this instant. The part that ends now is stored as a row of subscription_plan_parts
 * (its start, its end, the plan, version and negotiated prices that rated it); the plan history's row for the
 * period becomes the new plan at its list prices, so the last part — and every later period — is rated by it,
 * and any pending change is gone. The subscription's row, the webhook event and the audit record are written in
 * the same batch, guarded: the batch rolls back if the subscription changed meanwhile or the period got a
 * regular invoice (a draft counts), and the change is read again (withRetries).
 */
import { auditInsert, changed } from "../audit/record";
import { abortUnlessChanged, fromDrizzle, statement } from "../db/batch";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { subscriptionAccumulators, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { conflict } from "../lib/errors";
import { nowIso, periodBounds, periodOf } from "../lib/time";
import { outboxInsert } from "../webhooks/outbox";
import { assertActive, type PlanRef, samePlan, withRetries } from "./change";
import { type ChangePlanInput, changeTarget, type PlanMoveArgs } from "./change-plan";
import { assertShardable, assertSubscribable, ratePlanQuery } from "./subscribable";
import { loadSubscription, type SubscriptionView, subscriptionEventData } from "./views";

/** A regular invoice of the period that is not void, draft included: then the period can no longer split. */
const REGULAR_INVOICE = `SELECT 1 FROM invoices AS i WHERE i.environment = ?1 AND i.subscription_id = ?2
	AND i.billing_period = ?3 AND i.kind = 'regular' AND i.status <> 'void'`;

async function assertSplittable(d1: D1Database, scope: Scope, view: SubscriptionView, period: string) {
	const invoiced = await d1.prepare(REGULAR_INVOICE).bind(scope.environment, view.id, period).first();
	if (invoiced) {
		throw conflict(
			`Subscription ${view.id} already has a regular invoice for ${period} (a draft counts): its plan can change now no more this period; change it at period_end.`,
		);
	}
}

/** Where the part that ends now began: the latest split of the period, else the period's start. */
async function partStart(d1: D1Database, id: string, period: string): Promise<string> {
	const last = await d1
		.prepare(
			"SELECT max(ends_at) AS at FROM subscription_plan_parts WHERE subscription_id = ? AND period = ?",
		)
		.bind(id, period)
		.first<{ at: string | null }>();
	return last?.at ?? periodBounds(period).start;
}

async function assertMovable(db: Db, scope: Scope, view: SubscriptionView, target: PlanRef) {
	const [[plan], [current]] = await db.batch([
		ratePlanQuery(db, scope, target.id),
		ratePlanQuery(db, scope, view.rate_plan_id),
	]);
	if (!current) throw new Error(`Plan ${view.rate_plan_id} of subscription ${view.id} is missing`);
	// Another version of its own plan is no new subscription: an archived plan's subscriptions may move to it.
	assertSubscribable(
		target.id,
		plan && target.id === view.rate_plan_id ? { ...plan, status: "active" } : plan,
		current,
	);
	assertShardable(target.id, plan, view.shards);
}

export function changePlanNow(args: PlanMoveArgs<ChangePlanInput>): Promise<SubscriptionView> {
	return withRetries(() => tryChangeNow(args));
}

async function tryChangeNow({ env, db, scope, id, input }: PlanMoveArgs<ChangePlanInput>) {
	const loaded = await loadSubscription(db, scope, id);
	assertActive(loaded, "changed");
	const { view } = loaded;
	const target = await changeTarget(db, scope, view, input);
	if (samePlan(target, { id: view.rate_plan_id, version: view.rate_plan_version })) {
		throw conflict(
			`Subscription ${id} is already on rate plan ${target.id} version ${target.version}; nothing to change.`,
		);
	}
	await assertMovable(db, scope, view, target);
	const now = nowIso();
	const period = periodOf(now);
	const d1 = env.DB;
	await assertSplittable(d1, scope, view, period);
	const startsAt = await partStart(d1, id, period);
	if (startsAt >= now) throw conflict(`Subscription ${id} changed plan at this very instant; retry.`);

	const next: SubscriptionView = {
		...view,
		rate_plan_id: target.id,
		rate_plan_version: target.version,
		pending_rate_plan_id: null,
		pending_plan_change: null,
		price_overrides: [],
		pending_price_overrides: null,
	};
	const overrides = view.price_overrides.length > 0 ? JSON.stringify(view.price_overrides) : null;
	// Told first, so that no event of the split day is keyed by the day once the change is stored; a split that is
	// then not stored only splits a day row in two, each still within one part.
	await tellPlanSplit(env, scope, view, now);
	await d1.batch([
		statement(
			d1,
			`UPDATE subscriptions SET updated_at = ?4, rate_plan_id = ?5, rate_plan_version = ?6, pending_rate_plan_id = NULL
			WHERE environment = ?1 AND id = ?2 AND status = 'active' AND updated_at = ?3
				AND NOT EXISTS (${REGULAR_INVOICE.replace("?3", "?7")})`,
			scope.environment,
			id,
			loaded.updatedAt,
			now,
			target.id,
			target.version,
			period,
		),
		abortUnlessChanged(d1),
		statement(
			d1,
			`INSERT INTO subscription_plan_parts (subscription_id, period, starts_at, ends_at, rate_plan_id,
				rate_plan_version, price_overrides) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id,
			period,
			startsAt,
			now,
			view.rate_plan_id,
			view.rate_plan_version,
			overrides,
		),
		// The period's row rates its last part and the periods after it; a pending change is withdrawn.
		statement(
			d1,
			"DELETE FROM subscription_plans WHERE subscription_id = ? AND effective_period >= ?",
			id,
			period,
		),
		statement(
			d1,
			"INSERT INTO subscription_plans (subscription_id, effective_period, rate_plan_id, rate_plan_version, price_overrides) VALUES (?, ?, ?, ?, NULL)",
			id,
			period,
			target.id,
			target.version,
		),
		fromDrizzle(d1, outboxInsert(db, scope, "subscription.updated", subscriptionEventData(next))),
		auditInsert(d1, scope, {
			action: "subscription.updated",
			resourceId: id,
			changes: changed(
				{
					rate_plan_id: view.rate_plan_id,
					rate_plan_version: view.rate_plan_version,
					pending_plan_change: view.pending_plan_change,
					price_overrides: view.price_overrides,
				},
				{
					rate_plan_id: next.rate_plan_id,
					rate_plan_version: next.rate_plan_version,
					pending_plan_change: null,
					price_overrides: [],
				},
			),
		}),
	]);
	// Told again once stored, to learn the period's new plan. Should that fail, its alerts and threshold judgments
	// keep the earlier plan for the period (logged); what invoices bill does not depend on it.
	await tellPlanSplit(env, scope, view, now).catch((error) =>
		console.error(JSON.stringify({ at: "change-plan-now", id, error: String(error) })),
	);
	return next;
}

/**
 * Tells each accumulator of the subscription the split: from then on they key the split day's later events by it,
 * move those they counted already, and learn the period's plan again (usage-accumulator/parts/plan-splits.ts).
 */
async function tellPlanSplit(env: Env, scope: Scope, view: SubscriptionView, at: string): Promise<void> {
	await Promise.all(
		subscriptionAccumulators(scope.environment, view.id, view.shards).map((name) =>
			usageAccumulator(env, name).splitPlan(view.account_id, at),
		),
	);
}
