/**
 * Issuing a threshold invoice (docs/thresholds-and-recurring-credits.md), asked by the subscription's head
 * accumulator on the invoice queue once the period's usage not yet invoiced reached the subscription's
 * invoicing_threshold (durable-objects/usage-accumulator/parts/thresholds.ts).
 *
 * The invoice bills the period's usage rated as a whole so far, less what the period's earlier non-void
 * threshold invoices billed, per metric — so tiers never restart and each threshold invoice is a prefix of the
 * period's bill. No base fee, minimum or discount line; credits apply as to any invoice; never a draft. Made
 * only while the period has no regular invoice (a draft counts).
 *
 * Exactly once per request: the invoice carries the request's number (threshold_sequence, unique per
 * subscription and period), so a request asked again after a crash finds its invoice instead of making a
 * second. The answer to the accumulator says what the period's threshold invoices billed, from which it judges
 * the next crossing; should that answer be lost, the accumulator asks again and gets the same answer.
 */
import { eq } from "drizzle-orm";
import { periodWindow } from "../billing-period/period";
import { type Db, database } from "../db/client";
import { subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import {
	flushAccumulators,
	headAccumulator,
	subscriptionAccumulators,
	usageAccumulator,
} from "../durable-objects/usage-accumulator/handle";
import type { ThresholdRequest } from "../durable-objects/usage-accumulator/types";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import { nowIso } from "../lib/time";
import { DISCOUNT_METRIC } from "../pricing/period-discount";
import { BASE_FEE_METRIC, MINIMUM_METRIC } from "../pricing/rate";
import { type ComputedInvoice, rateThePeriod, type SubscriptionPeriodState } from "./computed";
import { withConversions } from "./conversions";
import type { InvoiceView } from "./invoices";
import { loadPeriodStates } from "./load";
import { ONE_OFF_METRIC } from "./one-off-lines";
import { thresholdLines } from "./threshold-rest";
import { storeInvoice } from "./write";

const NOT_USAGE = new Set([BASE_FEE_METRIC, MINIMUM_METRIC, DISCOUNT_METRIC, ONE_OFF_METRIC]);

/** The threshold invoice a request asks for, or null when it already exists or there is nothing to bill. */
export function draftThresholdInvoice(
	state: SubscriptionPeriodState,
	sequence: number,
): ComputedInvoice | null {
	if (state.invoiced || (state.thresholdSequences ?? []).includes(sequence)) return null;
	const conversion = state.conversion ?? null;
	const lines = thresholdLines(rateThePeriod(state), state.billedLines, conversion);
	if (lines.length === 0) return null;
	const amount = Decimal.sum(lines.map((line) => line.amount));
	if (amount.isNegative() || amount.isZero()) return null;
	return {
		subscriptionId: state.subscriptionId,
		accountId: state.accountId,
		ratePlanId: state.plan.id,
		kind: "threshold",
		sequence: Math.max(0, ...state.sequences) + 1,
		thresholdSequence: sequence,
		currency: conversion?.to ?? state.plan.currency,
		amount,
		lines,
		exchangeRate: conversion?.rate ?? null,
	};
}

/**
 * What the period's non-void invoices billed of usage: the charge lines only, in the plan's currency (the amounts
 * before conversion), as the head accumulator measures the usage not invoiced yet (docs/currencies.md).
 */
export function billedUsage(state: SubscriptionPeriodState, draft: ComputedInvoice | null): Decimal {
	const earlier = state.billedLines.filter((line) => !NOT_USAGE.has(line.metric));
	return Decimal.sum([
		...earlier.map((line) => Decimal.from(line.originalAmount ?? line.amount)),
		...(draft?.lines ?? []).map((line) => line.original?.amount ?? line.amount),
	]);
}

type Subscription = { id: string; accountId: string; shards: number };

/** The subscription and its period as invoicing sees it, or null when either is gone. */
export async function thresholdPeriodOf(
	db: Db,
	scope: Scope,
	subscriptionId: string,
	period: string,
	beforeLoading: (subscription: Subscription) => Promise<void> = async () => {},
): Promise<{ subscription: Subscription; state: SubscriptionPeriodState } | null> {
	const [subscription] = await db
		.select({
			id: subscriptions.id,
			accountId: subscriptions.accountId,
			startedAt: subscriptions.startedAt,
			cancelledAt: subscriptions.cancelledAt,
			cancelAt: subscriptions.cancelAt,
			shards: subscriptions.shards,
			billingCurrency: subscriptions.billingCurrency,
		})
		.from(subscriptions)
		.where(inScope(scope, subscriptions, eq(subscriptions.id, subscriptionId)));
	if (!subscription) return null;
	await beforeLoading(subscription);
	const [state] = await loadPeriodStates(db, scope, periodWindow(period), [
		{ ...subscription, endsAt: subscription.cancelledAt ?? subscription.cancelAt },
	]);
	return state ? { subscription, state } : null;
}

/** Handles one request of the invoice queue: the invoice (when due), then the answer to the accumulator. */
export async function issueThresholdInvoice(
	env: Env,
	request: ThresholdRequest,
): Promise<InvoiceView | null> {
	const scope: Scope = { environment: request.environment };
	const db = database(env.DB);
	// Usage counted by the other shards since the request reaches D1 too: the invoice bills the period so far.
	const found = await thresholdPeriodOf(db, scope, request.subscriptionId, request.period, (subscription) =>
		flushAccumulators(env, subscriptionAccumulators(scope.environment, subscription.id, subscription.shards)),
	);
	if (!found) return null;
	const { subscription } = found;
	// In the billing currency at the rate in effect now; without one the request waits (the head asks again).
	const { ready, refused } = await withConversions(db, scope, [found.state], nowIso());
	const state = ready[0];
	if (state === undefined) {
		console.error(JSON.stringify({ at: "threshold-invoice", request, waiting: refused.map((r) => r.to) }));
		return null;
	}
	const draft = draftThresholdInvoice(state, request.sequence);
	const window = periodWindow(request.period);
	const stored = draft === null ? null : await storeInvoice(db, scope, window, draft, nowIso());
	// Another run stored this period's invoice of that sequence first: the queue retries, reading what it left.
	if (draft !== null && stored === null) throw new Error("a concurrent invoice of the period came first");
	const billed = billedUsage(state, stored === null ? null : draft);
	await usageAccumulator(
		env,
		headAccumulator(scope.environment, subscription.id, subscription.shards),
	).thresholdInvoiced(subscription.accountId, {
		period: request.period,
		sequence: request.sequence,
		billed: billed.toString(),
		closed: state.invoiced,
	});
	return stored;
}
