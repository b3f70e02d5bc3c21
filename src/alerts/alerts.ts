/**
 * Alerts and budgets (docs/pricing.md#alerts-and-budgets) as stored resources. The rule lives in D1 and in the subscription's usage accumulator,
 * which evaluates it on ingest (durable-objects/usage-accumulator/parts/alert-book.ts) and copies each trigger back to
 * D1's alert_triggers with its flush; a read shows the current period's state from there.
 */

import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import { created, removed } from "../audit/record";
import { writeAudited } from "../audit/write";
import { planForPeriod } from "../billing-period/plan-in-effect";
import type { Db } from "../db/client";
import { type ById, getInScope, type InScope, type Page, type WithEnv } from "../db/rows";
import { alerts, alertTriggers, auditRecords, subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import { notFound, validationError } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso, periodOf } from "../lib/time";
import type { Charge } from "../pricing/charges";
import { getRatePlanRow } from "../pricing/rate-plans";
import { getSubscription } from "../subscriptions/views";

export type AlertType = "usage" | "margin";

export interface CreateAlertInput {
	subscription_id: string;
	type?: AlertType;
	metric?: string | null;
	min_costs?: number;
	threshold: number;
	name?: string | null;
	block?: boolean;
}

export interface AlertView {
	id: string;
	subscription_id: string;
	account_id: string;
	type: AlertType;
	metric: string | null;
	threshold: number;
	/** Margin alerts only. */
	min_costs?: number;
	name: string | null;
	block: boolean;
	status: "armed" | "triggered";
	triggered_at: string | null;
	billing_period: string;
	created_at: string;
}

type AlertRow = typeof alerts.$inferSelect;

function alertView(row: AlertRow, trigger: { triggeredAt: string } | null, period: string): AlertView {
	return {
		id: row.id,
		subscription_id: row.subscriptionId,
		account_id: row.accountId,
		type: row.type,
		metric: row.metric,
		threshold: Decimal.from(row.threshold).toNumber(),
		...(row.type === "margin" ? { min_costs: Decimal.from(row.minCosts ?? "0").toNumber() } : {}),
		name: row.name,
		block: row.block,
		status: trigger ? "triggered" : "armed",
		triggered_at: trigger?.triggeredAt ?? null,
		billing_period: period,
		created_at: row.createdAt,
	};
}

/**
 * Stores the alert, then tells the subscription's accumulator, which evaluates it at once. If the accumulator
 * cannot be told, the alert is removed again and the error answered: an alert that would never fire is not kept.
 */
export async function createAlert({
	env,
	db,
	scope,
	input,
}: WithEnv & {
	input: CreateAlertInput;
}): Promise<AlertView> {
	const subscription = await getSubscription({ db, scope, id: input.subscription_id });
	const type = input.type ?? "usage";
	const metric = input.metric ?? null;
	if (metric !== null && type === "usage") {
		// The metrics of the version that rates the subscription's current period (docs/plan-versions.md).
		const plan =
			(await planForPeriod(db, scope, subscription.id, periodOf(nowIso()))) ??
			(await getRatePlanRow({ db, scope, id: subscription.rate_plan_id }));
		const metrics = (plan.charges as Charge[]).map((charge) => charge.metric);
		if (!metrics.includes(metric)) {
			const known = metrics.length > 0 ? `its metrics are ${metrics.join(", ")}` : "it has no metrics";
			throw validationError(
				"metric",
				`"${metric}" is not a metric of the subscription's rate plan ${plan.id}: ${known}; omit metric for the total amount.`,
			);
		}
	}
	const row: AlertRow = {
		id: newId("alr"),
		environment: scope.environment,
		subscriptionId: subscription.id,
		accountId: subscription.account_id,
		metric,
		threshold: Decimal.from(input.threshold).toString(),
		name: input.name ?? null,
		block: input.block ?? false,
		type,
		minCosts: type === "margin" ? Decimal.from(input.min_costs ?? 0).toString() : null,
		createdAt: nowIso(),
	};
	await writeAudited(db, scope, [db.insert(alerts).values(row)], {
		action: "alert.created",
		resourceId: row.id,
		changes: created({
			subscription_id: row.subscriptionId,
			metric: row.metric,
			threshold: Decimal.from(row.threshold).toNumber(),
			name: row.name,
			block: row.block,
		}),
	});
	// A sharded subscription's alerts live in its head, which the other shards report to.
	const name = headAccumulator(scope.environment, subscription.id, subscription.shards);
	try {
		await usageAccumulator(env, name).setAlert(subscription.account_id, {
			id: row.id,
			type,
			metric,
			threshold: row.threshold,
			block: row.block,
			...(row.minCosts === null ? {} : { minCosts: row.minCosts }),
		});
	} catch (error) {
		// The alert never came to be: it goes, and so does the record of its creation.
		await db.batch([
			db.delete(alerts).where(eq(alerts.id, row.id)),
			db.delete(auditRecords).where(eq(auditRecords.resourceId, row.id)),
		]);
		throw error;
	}
	// A threshold already reached triggers now; its trigger reaches D1 with the accumulator's flush.
	return alertView(row, null, periodOf(row.createdAt));
}

function selectAlerts(db: Db, where: SQL, period: string) {
	return db
		.select({ alert: alerts, triggeredAt: alertTriggers.triggeredAt })
		.from(alerts)
		.leftJoin(
			alertTriggers,
			and(eq(alertTriggers.alertId, alerts.id), eq(alertTriggers.billingPeriod, period)),
		)
		.where(where);
}

export async function getAlert({ db, scope, id }: { db: Db; scope: Scope; id: string }): Promise<AlertView> {
	const period = periodOf(nowIso());
	const [found] = await selectAlerts(db, inScope(scope, alerts, eq(alerts.id, id)), period);
	if (!found) throw notFound("alert", id);
	return alertView(found.alert, found.triggeredAt ? { triggeredAt: found.triggeredAt } : null, period);
}

export async function listAlerts({
	db,
	scope,
	subscriptionId,
	limit,
	offset,
}: InScope &
	Page & {
		subscriptionId?: string;
	}): Promise<{ items: AlertView[]; total: number }> {
	const period = periodOf(nowIso());
	const where = inScope(
		scope,
		alerts,
		subscriptionId === undefined ? undefined : eq(alerts.subscriptionId, subscriptionId),
	);
	const [rows, [count]] = await db.batch([
		selectAlerts(db, where, period)
			.orderBy(desc(alerts.createdAt), desc(alerts.id))
			.limit(limit)
			.offset(offset),
		db.select({ n: sql<number>`count(*)` }).from(alerts).where(where),
	]);
	return {
		items: rows.map((r) => alertView(r.alert, r.triggeredAt ? { triggeredAt: r.triggeredAt } : null, period)),
		total: count?.n ?? 0,
	};
}

/**
 * Removes the alert from its accumulator first, so that a failure leaves an alert that still works rather than
 * one that fires after it was deleted; then here, with its triggers.
 */
export async function deleteAlert({
	env,
	db,
	scope,
	id,
}: ById & {
	env: Env;
}): Promise<void> {
	const row = await getInScope(db, scope, alerts, "alert", id);
	const [owner] = await db
		.select({ shards: subscriptions.shards })
		.from(subscriptions)
		.where(inScope(scope, subscriptions, eq(subscriptions.id, row.subscriptionId)));
	const name = headAccumulator(scope.environment, row.subscriptionId, owner?.shards ?? 1);
	await usageAccumulator(env, name).removeAlert(id);
	await writeAudited(
		db,
		scope,
		[
			db.delete(alerts).where(inScope(scope, alerts, eq(alerts.id, id))),
			db.delete(alertTriggers).where(eq(alertTriggers.alertId, id)),
		],
		{
			action: "alert.deleted",
			resourceId: id,
			changes: removed({
				subscription_id: row.subscriptionId,
				metric: row.metric,
				threshold: Decimal.from(row.threshold).toNumber(),
			}),
		},
	);
}
