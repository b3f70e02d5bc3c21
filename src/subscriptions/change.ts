/**
 * Changing a subscription (cancelling: cancel.ts). Each write is one D1 batch that first re-checks, with a guard, that
 * the subscription is still as it was read (same updated_at, still active); if another change came first, the
 * whole batch rolls back and the operation starts again from a fresh read. So the webhook event always
 * describes the state that was stored, and a subscription is never cancelled twice.
 */

import { ensureInstancesStatement } from "../agents/instances";
import { auditInsert, changed } from "../audit/record";
import { abortUnlessChanged, fromDrizzle, isAbortedByGuard, returned, statement } from "../db/batch";
import { type Db, isUniqueViolation } from "../db/client";
import type { ById } from "../db/rows";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { conflict } from "../lib/errors";
import { addPeriods, nowIso, periodBounds, periodOf } from "../lib/time";
import type { PriceOverride } from "../pricing/price-overrides";
import { outboxInsert } from "../webhooks/outbox";
import { assertOverridesFit } from "./create";
import { storedThreshold, tellThreshold } from "./invoicing-threshold";
import {
	announceMembershipChanges,
	assertNoneBusy,
	busyInstancesQuery,
	closeMembershipsStatement,
	type MembershipChange,
	membershipChanges,
	openMembershipsStatement,
	raceConflict,
} from "./memberships";
import { assertShardable, assertSubscribable, ratePlanQuery } from "./subscribable";
import {
	type LoadedSubscription,
	loadSubscription,
	type SubscriptionView,
	subscriptionEventData,
} from "./views";

const MAX_ATTEMPTS = 3;

export interface UpdateSubscriptionInput {
	rate_plan_id?: string;
	/** With rate_plan_id (change-plan.ts): that version instead of the plan's latest. */
	rate_plan_version?: number;
	agent_instance_ids?: string[];
	/** Negotiated prices from the next billing period on; [] returns to the plan's prices. */
	price_overrides?: PriceOverride[];
	/** docs/thresholds-and-recurring-credits.md: > 0 or null (checked by the route); applies at once. */
	invoicing_threshold?: number | null;
}

export type Membership = { id: number; agent_key: string };

/** Runs an attempt again when its batch's guard aborted it: another change came first. */
export async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
	for (let n = 1; ; n++) {
		try {
			return await attempt();
		} catch (error) {
			if (!isAbortedByGuard(error)) throw error;
			if (n === MAX_ATTEMPTS) throw conflict("The subscription is being changed by another request; retry.");
		}
	}
}

export function assertActive(current: LoadedSubscription, action: string): void {
	if (current.view.status === "cancelled") {
		throw conflict(`Subscription ${current.view.id} is already cancelled; it cannot be ${action}.`);
	}
}

/** Updates the row only if it is unchanged since `current` was read; otherwise the guard aborts the batch. */
export function claimRow(
	d1: D1Database,
	scope: Scope,
	current: LoadedSubscription,
	sets: string,
	...params: unknown[]
) {
	return [
		statement(
			d1,
			`UPDATE subscriptions SET ${sets} WHERE environment = ?1 AND id = ?2 AND status = 'active' AND updated_at = ?3`,
			scope.environment,
			current.view.id,
			current.updatedAt,
			...params,
		),
		abortUnlessChanged(d1),
	];
}

/** A plan at one of its versions (docs/plan-versions.md). */
export interface PlanRef {
	id: string;
	version: number;
}

export const samePlan = (a: PlanRef | null, b: PlanRef | null) =>
	a === b || (a !== null && b !== null && a.id === b.id && a.version === b.version);

export const pendingOf = (view: SubscriptionView): PlanRef | null =>
	view.pending_plan_change && {
		id: view.pending_plan_change.rate_plan_id,
		version: view.pending_plan_change.version,
	};

/**
 * The pending plan once `wanted` is applied: a new plan is checked and pending at its latest version; the
 * current plan and version withdraws it.
 */
async function pendingPlanAfter(
	db: Db,
	scope: Scope,
	view: SubscriptionView,
	wanted: string | undefined,
	version: number | undefined,
): Promise<PlanRef | null> {
	const pending = pendingOf(view);
	if (wanted === undefined) return pending;
	const [[current], [plan]] = await db.batch([
		ratePlanQuery(db, scope, view.rate_plan_id),
		ratePlanQuery(db, scope, wanted),
	]);
	const target = plan ? { id: wanted, version: version ?? plan.version } : null;
	if (target !== null && samePlan(target, pending)) return pending;
	if (target !== null && samePlan(target, { id: view.rate_plan_id, version: view.rate_plan_version }))
		return null;
	assertNextPeriodExists(view, "change the plan of");
	if (!current) throw new Error(`Plan ${view.rate_plan_id} of subscription ${view.id} is missing`);
	// Another version of its own plan is no new subscription: an archived plan's subscriptions may move to it.
	assertSubscribable(
		wanted,
		plan && wanted === view.rate_plan_id ? { ...plan, status: "active" } : plan,
		current,
	);
	assertShardable(wanted, plan, view.shards);
	return target;
}

export function assertNextPeriodExists(view: SubscriptionView, what: string): void {
	if (view.cancel_at !== null) {
		throw conflict(
			`Subscription ${view.id} is set to cancel at ${view.cancel_at}: it has no next period to ${what}.`,
		);
	}
}

/** What the next period's plan-history row holds, when the next period differs from this one. */
export interface NextPeriod {
	ratePlanId: string;
	version: number;
	overrides: PriceOverride[];
}

const sameOverrides = (a: readonly PriceOverride[] | null, b: readonly PriceOverride[] | null) =>
	JSON.stringify(a) === JSON.stringify(b);

/**
 * The next period's plan and negotiated prices once the PATCH is applied, or null when it is rated like this one.
 * Overrides given apply to the next period's plan (checked against it); a plan change without them starts the
 * new plan at its list prices, and withdrawing it keeps the current prices; otherwise the pending (or current)
 * prices stay.
 */
async function nextPeriodAfter(
	db: Db,
	scope: Scope,
	view: SubscriptionView,
	pending: PlanRef | null,
	given: PriceOverride[] | undefined,
): Promise<NextPeriod | null> {
	const { id: ratePlanId, version } = pending ?? { id: view.rate_plan_id, version: view.rate_plan_version };
	let overrides: PriceOverride[];
	if (given !== undefined) {
		if (view.cancel_at !== null && !sameOverrides(given, view.price_overrides)) {
			throw conflict(
				`Subscription ${view.id} is set to cancel at ${view.cancel_at}: it has no next period to change the prices of.`,
			);
		}
		const [plan] = await ratePlanQuery(db, scope, ratePlanId);
		assertOverridesFit(plan?.charges ?? [], given);
		overrides = given;
	} else if (pending !== null && !samePlan(pending, pendingOf(view))) {
		overrides = [];
	} else if (pending === null && view.pending_plan_change !== null) {
		// Withdrawing a plan change withdraws what it did to the prices too.
		overrides = view.price_overrides;
	} else {
		overrides = view.pending_price_overrides ?? view.price_overrides;
	}
	if (pending === null && sameOverrides(overrides, view.price_overrides)) return null;
	return { ratePlanId, version, overrides };
}

/** Replaces the future of the plan history: the next period's row, if it differs from this one's. */
export function planHistoryStatements(d1: D1Database, id: string, period: string, next: NextPeriod | null) {
	const statements = [
		statement(
			d1,
			"DELETE FROM subscription_plans WHERE subscription_id = ? AND effective_period > ?",
			id,
			period,
		),
	];
	if (next !== null) {
		statements.push(
			statement(
				d1,
				"INSERT INTO subscription_plans (subscription_id, effective_period, rate_plan_id, rate_plan_version, price_overrides) VALUES (?, ?, ?, ?, ?)",
				id,
				addPeriods(period, 1),
				next.ratePlanId,
				next.version,
				next.overrides.length > 0 ? JSON.stringify(next.overrides) : null,
			),
		);
	}
	return statements;
}

/**
 * Instance changes apply to events received from then on. A plan change applies from the next billing period:
 * it is stored as that period's plan-history row and shown as pending_rate_plan_id until then. Choosing the
 * current plan again withdraws a pending change.
 */
export function updateSubscription(args: {
	env: Env;
	db: Db;
	scope: Scope;
	id: string;
	input: UpdateSubscriptionInput;
}): Promise<SubscriptionView> {
	return withRetries(() => tryUpdate(args));
}

/** A move to `target` from the next period on: the plan change of a PATCH of rate_plan_id and version. */
export function moveToPlan(
	args: { env: Env; db: Db; scope: Scope; id: string },
	target: PlanRef,
): Promise<SubscriptionView> {
	return updateSubscription({
		...args,
		input: { rate_plan_id: target.id, rate_plan_version: target.version },
	});
}

async function tryUpdate({
	env,
	db,
	scope,
	id,
	input,
}: ById & {
	env: Env;
	input: UpdateSubscriptionInput;
}): Promise<SubscriptionView> {
	const current = await loadSubscription(db, scope, id);
	assertActive(current, "changed");
	const { view } = current;

	const pending = await pendingPlanAfter(db, scope, view, input.rate_plan_id, input.rate_plan_version);
	const nextPeriod = await nextPeriodAfter(db, scope, view, pending, input.price_overrides);
	const pendingOverrides =
		nextPeriod === null || sameOverrides(nextPeriod.overrides, view.price_overrides)
			? null
			: nextPeriod.overrides;

	let removed: string[] = [];
	let added: string[] = [];
	if (input.agent_instance_ids !== undefined) {
		const keys = new Set(input.agent_instance_ids);
		removed = view.agent_instance_ids.filter((key) => !keys.has(key));
		added = [...keys].filter((key) => !view.agent_instance_ids.includes(key));
		if (added.length > 0) assertNoneBusy(await busyInstancesQuery(db, scope, added, id));
	}
	const planChanged =
		!samePlan(pending, pendingOf(view)) || !sameOverrides(pendingOverrides, view.pending_price_overrides);
	const threshold =
		input.invoicing_threshold === undefined ? view.invoicing_threshold : input.invoicing_threshold;
	const thresholdChanged = threshold !== view.invoicing_threshold;
	if (!planChanged && !thresholdChanged && removed.length === 0 && added.length === 0) {
		if (input.invoicing_threshold !== undefined) await tellThreshold(env, scope, view);
		return view;
	}

	const now = nowIso();
	const period = periodOf(now);
	const next: SubscriptionView = {
		...view,
		pending_rate_plan_id: pending?.id ?? null,
		pending_plan_change: pending && {
			rate_plan_id: pending.id,
			version: pending.version,
			at: periodBounds(addPeriods(period, 1)).start,
		},
		pending_price_overrides: pendingOverrides,
		invoicing_threshold: threshold,
		agent_instance_ids: [...view.agent_instance_ids.filter((key) => !removed.includes(key)), ...added],
	};
	const d1 = env.DB;
	const statements = claimRow(
		d1,
		scope,
		current,
		"updated_at = ?4, rate_plan_id = ?5, pending_rate_plan_id = ?6, invoicing_threshold = ?7",
		now,
		view.rate_plan_id,
		pending?.id ?? null,
		storedThreshold(threshold),
	);
	if (planChanged) statements.push(...planHistoryStatements(d1, id, period, nextPeriod));
	const closeAt =
		removed.length > 0 ? statements.push(closeMembershipsStatement(d1, scope, id, now, removed)) - 1 : -1;
	if (added.length > 0) statements.push(fromDrizzle(d1, ensureInstancesStatement(db, scope, added)));
	const openAt =
		added.length > 0 ? statements.push(openMembershipsStatement(d1, scope, id, added, now)) - 1 : -1;
	statements.push(
		fromDrizzle(d1, outboxInsert(db, scope, "subscription.updated", subscriptionEventData(next))),
		auditInsert(d1, scope, {
			action: "subscription.updated",
			resourceId: id,
			changes: changed(
				{
					pending_rate_plan_id: view.pending_rate_plan_id,
					pending_plan_change: view.pending_plan_change,
					pending_price_overrides: view.pending_price_overrides,
					agent_instance_ids: view.agent_instance_ids,
					invoicing_threshold: view.invoicing_threshold,
				},
				{
					pending_rate_plan_id: next.pending_rate_plan_id,
					pending_plan_change: next.pending_plan_change,
					pending_price_overrides: next.pending_price_overrides,
					agent_instance_ids: next.agent_instance_ids,
					invoicing_threshold: next.invoicing_threshold,
				},
			),
		}),
	);

	let results: D1Result[];
	try {
		results = await d1.batch(statements);
	} catch (error) {
		if (isUniqueViolation(error)) throw raceConflict();
		throw error;
	}
	const changes: MembershipChange[] = [
		...membershipChanges(returned<Membership>(results[closeAt]), false),
		...membershipChanges(returned<Membership>(results[openAt]), true),
	];
	await announceMembershipChanges(
		env,
		scope,
		{ id, accountId: view.account_id, shards: view.shards },
		changes,
	);
	if (thresholdChanged) await tellThreshold(env, scope, next);
	return next;
}
