/**
 * A subscription's head accumulator — its only one, or shard 0 of a sharded one (identity.ts) — holds its alerts
 * (alert-book.ts): they are evaluated with each counting pass there, when an alert is set, and when another shard
 * reports its period so far after a flush (shards.ts).
 */
import { periodOf } from "../../../lib/time";
import {
	type AccumulatorIdentity,
	accumulatorName,
	accumulatorStub,
	isHead,
	parseAccumulatorName,
} from "../identity";
import type { ThresholdAnswer, ThresholdRebilled, ThresholdRequest } from "../types";
import type { AlertContext, AlertRule } from "./alert-book";
import type { AccumulatorParts } from "./context";
import { hasUnflushed } from "./flush";
import { type CountObserver, MetricDeltas } from "./metrics";
import { forgetSettlements, pendingSettlements, settle, settlementObserver } from "./reservations";
import { type ShardReport, shardReportOf, storeShardReport } from "./shards";

/**
 * What counting notifies besides the aggregates: the plan's metrics and, in a head, the subscription's alerts,
 * evaluated after the counts. Fresh for each counting pass.
 */
export function observersOf(
	parts: AccumulatorParts,
	identity: AccumulatorIdentity,
	accountId: string | null,
	now: number,
): CountObserver {
	const metrics = new MetricDeltas(
		parts.plans.sourcesOf,
		parts.store.metricQuantities,
		parts.store.prices,
		parts.plans.partsOf,
	);
	if (identity.kind !== "sub") return metrics;
	// Events naming a reservation settle it (reservations.ts): in the head at once, from a shard via its report.
	const settlements = settlementObserver(identity, now);
	const observers: CountObserver[] = isHead(identity)
		? [metrics, settlements, parts.alerts.observer(alertContext(parts, identity, accountId), now)]
		: [metrics, settlements];
	return {
		count: (event) => {
			for (const observer of observers) observer.count(event);
		},
		applyTo: (sql) => {
			for (const observer of observers) observer.applyTo(sql);
		},
	};
}

function alertContext(
	parts: AccumulatorParts,
	identity: AccumulatorIdentity,
	accountId: string | null,
): AlertContext {
	return {
		subscriptionId: identity.id,
		accountId,
		sharded: identity.shard !== null,
		planOf: (period) => parts.plans.planOf(period),
		billingOf: (plan) => parts.plans.billingOf(plan),
		metricsOf: (period) => parts.store.metricQuantities.periodRows(parts.store.sql, period),
	};
}

/**
 * Adds or replaces an alert, and evaluates it at once: a threshold the period has already reached triggers now,
 * not at the next event.
 */
export async function setAlert(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	rule: AlertRule,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity)) throw new Error(`Alerts belong to a subscription's head accumulator, not ${name}`);
	const now = new Date().toISOString();
	await parts.plans.learn(identity, [now]);
	parts.store.remember(name, accountId);
	parts.store.transaction(() => {
		parts.alerts.set(rule);
		parts.alerts.evaluate(parts.store.sql, alertContext(parts, identity, accountId), periodOf(now));
	});
	await parts.flushSoon();
}

/** In a sharded subscription's head: another shard's period so far, on which the alerts are evaluated at once. */
export async function receiveShardReport(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	report: ShardReport,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (identity.shard !== 0) throw new Error(`Shards report to their head (shard 0), not ${name}`);
	const now = new Date().toISOString();
	await parts.plans.learn(identity, [now]);
	const { store } = parts;
	store.remember(name, accountId);
	store.transaction(() => {
		// The shard's events and the holds they settle reach the budgets together.
		settle(store.sql, report.settled ?? [], Date.now());
		storeShardReport(store.sql, report);
		if (report.period !== periodOf(now)) return;
		parts.alerts.evaluate(store.sql, alertContext(parts, identity, accountId), report.period);
	});
	// What the alerts triggered is flushed like any trigger; a threshold request is sent by the alarm.
	const waiting = parts.alerts.thresholds.pending().length > 0;
	if (waiting || (!store.isEmpty && hasUnflushed(store.sql))) await parts.flushSoon();
}

/**
 * A rate of the pair its plan's amounts convert by was added (exchange-rates/notify.ts): the conversion is read
 * again now and the current period evaluated at once, so alerts and a threshold check waiting for a rate go on.
 */
export async function exchangeRatesChanged(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity)) return;
	parts.plans.rates.expire();
	const now = new Date().toISOString();
	await parts.plans.learn(identity, [now]);
	if (parts.store.isEmpty) return;
	parts.store.remember(name, accountId);
	parts.store.transaction(() => {
		parts.alerts.evaluate(parts.store.sql, alertContext(parts, identity, accountId), periodOf(now));
	});
	if (hasUnflushed(parts.store.sql) || parts.alerts.thresholds.pending().length > 0) await parts.flushSoon();
}

/** A shard other than the head sends it its current period after each flush. */
export async function reportToHead(parts: AccumulatorParts): Promise<void> {
	const identity = parts.store.identity();
	if (identity === null || identity.shard === null || identity.shard === 0) return;
	const now = Date.now();
	const report = shardReportOf(parts.store.sql, identity.shard, periodOf(new Date(now).toISOString()), now);
	const settled = pendingSettlements(parts.store.sql);
	const head = accumulatorName(identity.environment, { subscriptionId: identity.id, shard: 0 });
	await accumulatorStub(parts.env, head).reportShard(head, identity.accountId, { ...report, settled });
	forgetSettlements(parts.store.sql, settled);
}

/**
 * Sets (or, null, removes) the subscription's invoicing threshold and judges the current period at once: a
 * period already over it gets its threshold invoice now, not at the next event.
 */
export async function setInvoicingThreshold(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	threshold: string | null,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity))
		throw new Error(`Thresholds belong to a subscription's head accumulator, not ${name}`);
	const now = new Date().toISOString();
	await parts.plans.learn(identity, [now]);
	parts.store.remember(name, accountId);
	const requested = parts.store.transaction(() => {
		parts.alerts.thresholds.set(threshold);
		return parts.alerts.judgeThreshold(
			parts.store.sql,
			alertContext(parts, identity, accountId),
			periodOf(now),
		);
	});
	if (requested) await parts.flushSoon();
}

/** Invoicing's answer to a threshold request; the period is judged again from what is now billed. */
export async function thresholdInvoiced(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	answer: ThresholdAnswer,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity))
		throw new Error(`Thresholds belong to a subscription's head accumulator, not ${name}`);
	await parts.plans.learn(identity, [`${answer.period}-01T00:00:00.000Z`]);
	parts.store.remember(name, accountId);
	const requested = parts.store.transaction(() => {
		parts.alerts.thresholds.answered(answer);
		if (answer.period !== periodOf(new Date().toISOString())) return false;
		return parts.alerts.judgeThreshold(
			parts.store.sql,
			alertContext(parts, identity, accountId),
			answer.period,
		);
	});
	if (requested) await parts.flushSoon();
}

/** A threshold invoice of the period was voided: the period is judged again from what is still billed. */
export async function thresholdVoided(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	rebilled: ThresholdRebilled,
): Promise<void> {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity))
		throw new Error(`Thresholds belong to a subscription's head accumulator, not ${name}`);
	await parts.plans.learn(identity, [`${rebilled.period}-01T00:00:00.000Z`]);
	parts.store.remember(name, accountId);
	const requested = parts.store.transaction(() => {
		parts.alerts.thresholds.rebilled(rebilled.period, rebilled.billed);
		if (rebilled.period !== periodOf(new Date().toISOString())) return false;
		return parts.alerts.judgeThreshold(
			parts.store.sql,
			alertContext(parts, identity, accountId),
			rebilled.period,
		);
	});
	if (requested) await parts.flushSoon();
}

/**
 * From the alarm, after its flush put the requests' events in D1: asks invoicing for each waiting threshold
 * invoice not asked lately. True while some request waits for its answer (the alarm comes back to ask again).
 */
export async function sendThresholdRequests(parts: AccumulatorParts): Promise<boolean> {
	const identity = parts.store.identity();
	if (identity === null || identity.kind !== "sub" || !isHead(identity)) return false;
	const book = parts.alerts.thresholds;
	for (const request of book.due(Date.now())) {
		const message: ThresholdRequest = {
			kind: "threshold",
			environment: identity.environment,
			subscriptionId: identity.id,
			...request,
		};
		try {
			await parts.env.INVOICE_QUEUE.send(message);
		} catch (error) {
			book.unsent(request);
			console.error(JSON.stringify({ at: "usage-accumulator.threshold", error: String(error) }));
		}
	}
	return book.pending().length > 0;
}
