/**
 * Cancelling a subscription, at once or at the end of its period, and the cron's cancellation of one whose
 * cancel_at has come. Like a change (change.ts), each write is one guarded D1 batch, retried from a fresh read
 * when another change came first.
 */
import { auditInsert, changed } from "../audit/record";
import { fromDrizzle, returned, statement } from "../db/batch";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { conflict } from "../lib/errors";
import { nowIso, periodBounds, periodOf } from "../lib/time";
import { outboxInsert } from "../webhooks/outbox";
import { assertActive, claimRow, type Membership, planHistoryStatements, withRetries } from "./change";
import { announceMembershipChanges, closeMembershipsStatement, membershipChanges } from "./memberships";
import {
	type LoadedSubscription,
	loadSubscription,
	type SubscriptionView,
	subscriptionEventData,
} from "./views";

/**
 * Cancels at once: the instances leave the subscription (their later events are counted, unbilled, by their own
 * accumulators) and a pending plan change is dropped. Usage received before stays billable for its period.
 * With `atPeriodEnd` it only schedules that: the subscription stays active with cancel_at, the next period's
 * first instant, until the cron cancels it then (cancelDueSubscriptions).
 */
export function cancelSubscription(args: {
	env: Env;
	db: Db;
	scope: Scope;
	id: string;
	atPeriodEnd?: boolean;
}): Promise<SubscriptionView> {
	return withRetries(() => (args.atPeriodEnd ? tryScheduleCancel(args) : tryCancel(args)));
}

/**
 * Cancels a subscription whose cancel_at has come, as of that instant (the cron calls this a little later, so
 * the memberships close and cancelled_at reads exactly the period boundary). Null when it is no longer due:
 * cancelled meanwhile, by a request or by a concurrent run.
 */
export async function cancelScheduled(args: {
	env: Env;
	db: Db;
	scope: Scope;
	id: string;
	now: string;
}): Promise<SubscriptionView | null> {
	return withRetries(async () => {
		const current = await loadSubscription(args.db, args.scope, args.id);
		const at = current.view.cancel_at;
		if (current.view.status !== "active" || at === null || at > args.now) return null;
		return tryCancel({ ...args, current, at });
	});
}

async function tryCancel({
	env,
	db,
	scope,
	id,
	current: loaded,
	at,
}: {
	env: Env;
	db: Db;
	scope: Scope;
	id: string;
	current?: LoadedSubscription;
	at?: string;
}) {
	const current = loaded ?? (await loadSubscription(db, scope, id));
	assertActive(current, "cancelled again");
	const now = at ?? nowIso();
	const cancelled: SubscriptionView = {
		...current.view,
		status: "cancelled",
		cancelled_at: now,
		cancel_at: null,
		pending_rate_plan_id: null,
		pending_price_overrides: null,
	};
	const d1 = env.DB;
	const results = await d1.batch([
		...claimRow(
			d1,
			scope,
			current,
			"status = 'cancelled', cancelled_at = ?4, updated_at = ?5, pending_rate_plan_id = NULL, cancel_at = NULL",
			now,
			nowIso(),
		),
		statement(
			d1,
			"DELETE FROM subscription_plans WHERE subscription_id = ? AND effective_period > ?",
			id,
			periodOf(now),
		),
		closeMembershipsStatement(d1, scope, id, now),
		...eventAndAudit(d1, db, scope, "subscription.cancelled", current.view, cancelled, {
			status: cancelled.status,
			cancelled_at: cancelled.cancelled_at,
			cancel_at: cancelled.cancel_at,
			pending_rate_plan_id: cancelled.pending_rate_plan_id,
		}),
	]);
	const closed = membershipChanges(returned<Membership>(results[3]), false);
	await announceMembershipChanges(
		env,
		scope,
		{ id, accountId: current.view.account_id, shards: current.view.shards },
		closed,
	);
	return cancelled;
}

/**
 * Schedules the cancellation for the start of the next period. A pending plan change is dropped: there is no
 * next period for it. Emits subscription.updated now; subscription.cancelled follows when it is cancelled.
 */
async function tryScheduleCancel({ env, db, scope, id }: { env: Env; db: Db; scope: Scope; id: string }) {
	const current = await loadSubscription(db, scope, id);
	assertActive(current, "cancelled again");
	if (current.view.cancel_at !== null) {
		throw conflict(`Subscription ${id} is already set to cancel at ${current.view.cancel_at}.`);
	}
	const now = nowIso();
	const cancelAt = periodBounds(periodOf(now)).end;
	const scheduled: SubscriptionView = {
		...current.view,
		cancel_at: cancelAt,
		pending_rate_plan_id: null,
		pending_price_overrides: null,
	};
	const d1 = env.DB;
	await d1.batch([
		...claimRow(
			d1,
			scope,
			current,
			"cancel_at = ?4, updated_at = ?5, pending_rate_plan_id = NULL",
			cancelAt,
			now,
		),
		...planHistoryStatements(d1, id, periodOf(now), null),
		...eventAndAudit(d1, db, scope, "subscription.updated", current.view, scheduled, {
			cancel_at: scheduled.cancel_at,
			pending_rate_plan_id: scheduled.pending_rate_plan_id,
		}),
	]);
	return scheduled;
}

/**
 * The webhook event of the subscription as stored, and its audit record: the fields of `after` that differ from
 * `before`, the subscription as it was read.
 */
function eventAndAudit(
	d1: D1Database,
	db: Db,
	scope: Scope,
	action: "subscription.cancelled" | "subscription.updated",
	before: SubscriptionView,
	stored: SubscriptionView,
	after: Partial<SubscriptionView>,
) {
	return [
		fromDrizzle(d1, outboxInsert(db, scope, action, subscriptionEventData(stored))),
		auditInsert(d1, scope, { action, resourceId: before.id, changes: changed(before, after) }),
	];
}
