import { ensureInstancesStatement } from "../agents/instances";
import { auditInsert, created } from "../audit/record";
import { fromDrizzle, returned } from "../db/batch";
import { isUniqueViolation } from "../db/client";
import type { WithEnv } from "../db/rows";
import { subscriptionPlans, subscriptions } from "../db/schema";
import { DomainError, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso, periodOf } from "../lib/time";
import type { Charge } from "../pricing/charges";
import { overrideErrors, type PriceOverride } from "../pricing/price-overrides";
import { outboxInsert } from "../webhooks/outbox";
import { adoptUnbilledUsage } from "./adoption";
import { storedThreshold, tellThreshold } from "./invoicing-threshold";
import {
	announceMembershipChanges,
	assertNoneBusy,
	assertNoOverlap,
	busyInstancesQuery,
	endedAfterQuery,
	membershipChanges,
	openMembershipsStatement,
	raceConflict,
} from "./memberships";
import { accountQuery, assertShardable, assertSubscribable, ratePlanQuery } from "./subscribable";
import { type SubscriptionView, subscriptionEventData } from "./views";

export interface CreateSubscriptionInput {
	account_id: string;
	rate_plan_id: string;
	agent_instance_ids: string[];
	/** docs/billing.md#subscription-lifecycle: at most 35 days back, not in the future (checked by the route); default now. */
	started_at?: string;
	/** docs/billing.md#subscription-lifecycle: move the instances' unbilled usage since started_at into the subscription. */
	adopt_unbilled_usage?: boolean;
	/** How many usage accumulators count its events (1–64, checked by the route); default 1. */
	shards?: number;
	/** The currency its invoices are in (docs/currencies.md); default the account's. */
	billing_currency?: string;
	/** Negotiated prices from the start (docs/discounts.md#negotiated-prices); checked against the plan here. */
	price_overrides?: PriceOverride[];
	/** docs/thresholds-and-recurring-credits.md: > 0 (checked by the route), or null for none. */
	invoicing_threshold?: number | null;
}

/** Overrides that name no metric of the plan, or a model its source cannot feed → 400, nothing stored. */
export function assertOverridesFit(charges: unknown, overrides: readonly PriceOverride[]): void {
	const details = overrideErrors(charges as Charge[], overrides);
	const first = details[0];
	if (first) throw new DomainError("validation_error", `price_overrides: ${first.message}.`, { details });
}

/**
 * Subscribes an account to a plan for some instances, registering instance keys nobody registered yet. The
 * subscription, its first plan-history row, its memberships and subscription.created are one D1 batch. Unbilled
 * usage to adopt is moved once the instances are announced to their new holder (adoption.ts); when that fails,
 * the subscription exists all the same and the cron finishes the adoption.
 */
export async function createSubscription({
	env,
	db,
	scope,
	input,
}: WithEnv & {
	input: CreateSubscriptionInput;
}): Promise<SubscriptionView> {
	const keys = [...new Set(input.agent_instance_ids)];
	const now = nowIso();
	const startedAt = input.started_at === undefined ? now : new Date(input.started_at).toISOString();
	const [[account], [plan], busy, ended] = await db.batch([
		accountQuery(db, scope, input.account_id),
		ratePlanQuery(db, scope, input.rate_plan_id),
		busyInstancesQuery(db, scope, keys),
		// A start in the past must not reach into a time when an instance belonged to another subscription.
		endedAfterQuery(db, scope, keys, startedAt),
	]);
	if (!account) throw notFound("account", input.account_id);
	assertSubscribable(input.rate_plan_id, plan);
	assertShardable(input.rate_plan_id, plan, input.shards ?? 1);
	const overrides = input.price_overrides ?? [];
	assertOverridesFit(plan?.charges, overrides);
	assertNoneBusy(busy);
	assertNoOverlap(ended, startedAt);

	const view: SubscriptionView = {
		id: newId("sub"),
		account_id: account.id,
		rate_plan_id: input.rate_plan_id,
		// New subscriptions take the plan's latest version (docs/plan-versions.md).
		rate_plan_version: plan?.version ?? 1,
		pending_rate_plan_id: null,
		pending_plan_change: null,
		agent_instance_ids: keys,
		status: "active",
		started_at: startedAt,
		cancelled_at: null,
		cancel_at: null,
		shards: input.shards ?? 1,
		billing_currency: input.billing_currency ?? account.currency,
		price_overrides: overrides,
		pending_price_overrides: null,
		discount: null,
		invoicing_threshold: input.invoicing_threshold ?? null,
		created_at: now,
	};
	const d1 = env.DB;
	let results: D1Result[];
	try {
		results = await d1.batch([
			fromDrizzle(d1, ensureInstancesStatement(db, scope, keys)),
			fromDrizzle(
				d1,
				db.insert(subscriptions).values({
					id: view.id,
					environment: scope.environment,
					accountId: view.account_id,
					ratePlanId: view.rate_plan_id,
					ratePlanVersion: view.rate_plan_version,
					pendingRatePlanId: null,
					status: "active",
					startedAt,
					cancelledAt: null,
					shards: view.shards,
					billingCurrency: view.billing_currency,
					createdAt: now,
					updatedAt: now,
					adoptPending: input.adopt_unbilled_usage === true,
					invoicingThreshold: storedThreshold(view.invoicing_threshold),
				}),
			),
			fromDrizzle(
				d1,
				db.insert(subscriptionPlans).values({
					subscriptionId: view.id,
					effectivePeriod: periodOf(startedAt),
					ratePlanId: view.rate_plan_id,
					ratePlanVersion: view.rate_plan_version,
					priceOverrides: overrides.length > 0 ? overrides : null,
				}),
			),
			openMembershipsStatement(d1, scope, view.id, keys, now),
			fromDrizzle(d1, outboxInsert(db, scope, "subscription.created", subscriptionEventData(view))),
			auditInsert(d1, scope, {
				action: "subscription.created",
				resourceId: view.id,
				changes: created({
					account_id: view.account_id,
					rate_plan_id: view.rate_plan_id,
					rate_plan_version: view.rate_plan_version,
					agent_instance_ids: view.agent_instance_ids,
					started_at: view.started_at,
					shards: view.shards,
					billing_currency: view.billing_currency,
					price_overrides: view.price_overrides.length > 0 ? view.price_overrides : undefined,
					invoicing_threshold: view.invoicing_threshold ?? undefined,
				}),
			}),
		]);
	} catch (error) {
		if (isUniqueViolation(error)) throw raceConflict();
		throw error;
	}
	const opened = returned<{ id: number; agent_key: string }>(results[3]);
	await announceMembershipChanges(
		env,
		scope,
		{ id: view.id, accountId: view.account_id, shards: view.shards },
		membershipChanges(opened, true),
	);
	if (view.invoicing_threshold !== null) await tellThreshold(env, scope, view);
	if (input.adopt_unbilled_usage === true) {
		try {
			await adoptUnbilledUsage(env, scope, view.id);
		} catch (error) {
			console.error(
				JSON.stringify({ at: "createSubscription.adopt", subscription: view.id, error: String(error) }),
			);
		}
	}
	return view;
}
