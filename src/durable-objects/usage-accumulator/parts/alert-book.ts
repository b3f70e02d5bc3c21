/**
 * Alerts and budgets (docs/pricing.md#alerts-and-budgets), evaluated where the live aggregates are: after each record call, in its transaction,
 * the current period's value of every alert still armed for that period is computed from the daily rows, the
 * metrics and the period's plan; an alert whose value reached its threshold is triggered — a row in
 * alert_triggers (at most one per alert and period, its primary key) and an alert.triggered outbox row, both
 * written with the events that caused them. The flush copies triggers to D1's alert_triggers; a new period
 * finds every alert armed again.
 *
 * A margin alert (docs/margins.md#margin-alerts) watches the subscription's live margin instead: revenue so far as
 * GET /v1/usage rates it (minimum top-up included, base fee prorated where the plan says so) against the costs
 * this accumulator computed for the period's events — metadata.cost and LLM calls priced from the model prices,
 * in the plan's currency, plus what the other shards reported — and triggers once the costs exceed its min_costs
 * and the margin percent is below its threshold (revenue 0 with costs counts as below any threshold).
 *
 * The rules are told by the API (setAlert/removeAlert) and kept in alert_rules (margin ones in
 * margin_alert_rules); what is triggered this period is kept in memory once read, so a call with no armed alert
 * costs nothing.
 */
import { periodWindow } from "../../../billing-period/period";
import { baseFeeProration, rateWithProration } from "../../../billing-period/proration";
import { statement } from "../../../db/batch";
import { Decimal } from "../../../lib/decimal";
import { newId } from "../../../lib/ids";
import { nowIso, periodOf } from "../../../lib/time";
import { quantitiesForPlan } from "../../../pricing/quantities";
import { BASE_FEE_METRIC, MINIMUM_METRIC, rateUsage } from "../../../pricing/rate";
import { type MetricQuantity, needsMetering } from "../../../pricing/sources";
import { readUsage } from "../storage/aggregate-rows";
import { readMetrics } from "../storage/metric-rows";
import { ALERTS_SCHEMA } from "../storage/schema";
import type { FlushTarget, MeteringEvent } from "../types";
import type { CountObserver } from "./metrics";
import type { PeriodPlan } from "./period-plans";
import { type Billing, type HeldConversion, inBilling } from "./rates";
import { reportedCosts, reportedUsage } from "./shards";
import { ThresholdBook } from "./thresholds";

/**
 * An alert as the accumulator needs it. Usage (the default): metric null is the period's total amount so far, base
 * fee included. Margin: threshold is a margin percent, minCosts the costs the period must exceed first.
 */
export interface AlertRule {
	id: string;
	type?: "usage" | "margin";
	metric: string | null;
	/** Exact decimal. */
	threshold: string;
	block: boolean;
	/** Margin alerts: exact decimal, default "0". */
	minCosts?: string;
}

export interface AlertContext {
	subscriptionId: string;
	accountId: string | null;
	/** Whether other shards report to this head (shards.ts); an unsharded subscription has nothing to add. */
	sharded: boolean;
	planOf: (period: string) => PeriodPlan | null;
	/** The currency a plan's amounts are compared in, and their conversion now; null while no rate is in effect. */
	billingOf: (plan: PeriodPlan) => Billing | null;
	/** The period's metric quantities per instance, as readMetrics answers them (from memory, see metrics.ts). */
	metricsOf: (period: string) => MetricQuantity[];
}

type TriggerRow = { alert_id: string; period: string; triggered_at: string; value: string };

export class AlertBook {
	private rules: AlertRule[] | undefined;
	// Per period, the ids of the alerts already triggered in it.
	private triggered = new Map<string, Set<string>>();
	private tablesReady = false;
	/** The subscription's invoicing threshold, judged here with the alerts (thresholds.ts). */
	readonly thresholds: ThresholdBook;

	constructor(private readonly sql: SqlStorage) {
		this.thresholds = new ThresholdBook(sql);
	}

	private ensureTables(): void {
		if (this.tablesReady) return;
		this.sql.exec(ALERTS_SCHEMA);
		this.tablesReady = true;
	}

	/** Memory may be ahead of a transaction that rolled back: read everything again next time. */
	forget(): void {
		this.rules = undefined;
		this.triggered.clear();
		this.thresholds.forget();
	}

	private rulesNow(): AlertRule[] {
		if (this.rules === undefined) {
			this.ensureTables();
			this.rules = this.sql
				.exec<{ id: string; metric: string | null; threshold: string; block: number }>(
					"SELECT id, metric, threshold, block FROM alert_rules ORDER BY id",
				)
				.toArray()
				.map((row): AlertRule => ({ ...row, type: "usage", block: row.block === 1 }));
			const margins = this.sql
				.exec<{ id: string; threshold: string; min_costs: string }>(
					"SELECT id, threshold, min_costs FROM margin_alert_rules ORDER BY id",
				)
				.toArray()
				.map(
					(row): AlertRule => ({
						id: row.id,
						type: "margin",
						metric: null,
						threshold: row.threshold,
						block: false,
						minCosts: row.min_costs,
					}),
				);
			this.rules.push(...margins);
		}
		return this.rules;
	}

	private triggeredIn(period: string): Set<string> {
		let ids = this.triggered.get(period);
		if (ids === undefined) {
			this.ensureTables();
			ids = new Set(
				this.sql
					.exec<{ alert_id: string }>("SELECT alert_id FROM alert_triggers WHERE period = ?", period)
					.toArray()
					.map((row) => row.alert_id),
			);
			this.triggered.set(period, ids);
		}
		return ids;
	}

	set(rule: AlertRule): void {
		this.ensureTables();
		if (rule.type === "margin") {
			this.sql.exec(
				"INSERT OR REPLACE INTO margin_alert_rules (id, threshold, min_costs) VALUES (?, ?, ?)",
				rule.id,
				rule.threshold,
				rule.minCosts ?? "0",
			);
			this.rules = undefined;
			return;
		}
		this.sql.exec(
			"INSERT OR REPLACE INTO alert_rules (id, metric, threshold, block) VALUES (?, ?, ?, ?)",
			rule.id,
			rule.metric,
			rule.threshold,
			rule.block ? 1 : 0,
		);
		this.rules = undefined;
	}

	remove(id: string): void {
		this.ensureTables();
		this.sql.exec("DELETE FROM alert_rules WHERE id = ?", id);
		this.sql.exec("DELETE FROM margin_alert_rules WHERE id = ?", id);
		this.rules = undefined;
	}

	/** The block alerts triggered in the period: what makes an entitlement answer allowed: false. */
	blockedBy(period: string): string[] {
		const triggered = this.triggeredIn(period);
		return this.rulesNow()
			.filter((rule) => rule.block && triggered.has(rule.id))
			.map((rule) => rule.id);
	}

	/** The block alerts on the period's total amount: the budgets a reservation must fit (reservations.ts). */
	budgets(): AlertRule[] {
		return this.rulesNow().filter((rule) => rule.block && rule.metric === null);
	}

	/** An observer for a record call: it notes whether the current period was touched, then evaluates. */
	observer(context: AlertContext, now: number): CountObserver {
		const period = periodOf(new Date(now).toISOString());
		let touched = false;
		return {
			count: (event: MeteringEvent) => {
				if (!touched && event.timestamp.startsWith(period)) touched = true;
			},
			applyTo: (sql: SqlStorage) => {
				if (touched) this.evaluate(sql, context, period);
			},
		};
	}

	/**
	 * Stores a threshold invoice's request when the period's usage amount not yet invoiced reached the
	 * subscription's invoicing threshold (thresholds.ts); judged once per call, after all its events counted.
	 */
	judgeThreshold(sql: SqlStorage, context: AlertContext, period: string): boolean {
		if (!this.thresholds.armed(period)) return false;
		const plan = context.planOf(period);
		if (plan === null) return false;
		// In the billing currency: without a rate in effect the check waits for one (rates.ts).
		const billing = context.billingOf(plan);
		if (billing === null) return false;
		const values = periodValues(sql, plan, period, [{ metric: null }], context.sharded, context.metricsOf);
		return this.thresholds.judge(period, values.usageAmount, billing.conversion);
	}

	/** Triggers every armed alert of the period whose value reached its threshold. */
	evaluate(sql: SqlStorage, context: AlertContext, period: string): void {
		this.judgeThreshold(sql, context, period);
		const rules = this.rulesNow();
		if (rules.length === 0) return;
		const triggered = this.triggeredIn(period);
		const plan = context.planOf(period);
		if (plan === null) return;
		// The total counts in the billing currency: without a rate in effect those alerts wait (rates.ts).
		const billing = context.billingOf(plan);
		const armed = rules.filter((rule) => !triggered.has(rule.id) && (billing !== null || !onTotal(rule)));
		if (armed.length === 0) return;
		const conversion = billing?.conversion ?? null;
		const values = periodValues(sql, plan, period, armed, context.sharded, context.metricsOf, conversion);
		const now = nowIso();
		const trigger = (rule: AlertRule, value: Decimal, data: Record<string, unknown>) => {
			sql.exec(
				"INSERT OR IGNORE INTO alert_triggers (alert_id, period, triggered_at, value) VALUES (?, ?, ?, ?)",
				rule.id,
				period,
				now,
				value.toString(),
			);
			sql.exec(
				"INSERT INTO outbox (id, event, data) VALUES (?, 'alert.triggered', ?)",
				newId("evt"),
				JSON.stringify({
					alert_id: rule.id,
					account_id: context.accountId,
					subscription_id: context.subscriptionId,
					type: rule.type ?? "usage",
					metric: rule.metric,
					threshold: Decimal.from(rule.threshold).toNumber(),
					value: value.toNumber(),
					billing_period: period,
					block: rule.block,
					...data,
				}),
			);
			triggered.add(rule.id);
		};
		for (const rule of armed) {
			if (rule.type === "margin") {
				const margin = values.margin;
				if (margin === null || !marginBelow(margin, rule)) continue;
				trigger(rule, margin.percent, {
					revenue: margin.revenue.toNumber(),
					costs: margin.costs.toNumber(),
					margin_percent: margin.percent.toNumber(),
				});
				continue;
			}
			const value = rule.metric === null ? values.total : values.quantities.get(rule.metric);
			if (value === undefined || value.lt(Decimal.from(rule.threshold))) continue;
			trigger(rule, value, {});
		}
	}
}

// A usage alert on the period's total amount (a budget when it blocks).
const onTotal = (rule: AlertRule) => rule.type !== "margin" && rule.metric === null;

interface LiveMargin {
	revenue: Decimal;
	costs: Decimal;
	/** margin / revenue × 100, half-up to 2 decimals; 0 without revenue (as the reports answer it). */
	percent: Decimal;
}

const HUNDRED = Decimal.from(100);

/** Costs above min_costs, and the margin below the threshold — compared exactly, not on the rounded percent. */
function marginBelow(margin: LiveMargin, rule: AlertRule): boolean {
	if (!margin.costs.gt(Decimal.from(rule.minCosts ?? "0"))) return false;
	if (margin.revenue.isZero()) return true;
	// (revenue − costs) × 100 / revenue < threshold, with revenue > 0 (rated amounts are never negative).
	return margin.revenue.sub(margin.costs).mul(HUNDRED).lt(Decimal.from(rule.threshold).mul(margin.revenue));
}

/** The costs this accumulator computed for the period's events in `currency`, with the other shards' reports. */
function periodCosts(sql: SqlStorage, period: string, currency: string, sharded: boolean): Decimal {
	const rows = sql
		.exec<{ amount: string }>(
			`SELECT amount FROM costs WHERE period = ?1 AND currency = ?2
			UNION ALL SELECT amount FROM model_costs WHERE period = ?1 AND currency = ?2`,
			period,
			currency,
		)
		.toArray();
	const own = Decimal.sum(rows.map((row) => Decimal.from(row.amount)));
	return sharded ? own.add(reportedCosts(sql, period, currency)) : own;
}

/**
 * The period's quantity of the metrics the armed alerts watch, and its total amount so far as GET /v1/usage rates
 * it — base fee and charges, without a minimum commitment's top-up: a spend alert is about what was used, and a
 * top-up would put every period of a plan with a minimum over its budget from the first event. Only what the
 * alerts need is read: the daily rows only when a watched charge (or the total) needs them. With margin alerts
 * armed, also the live margin: the rated total with the top-up, as GET /v1/usage answers it, against the costs.
 */
export function periodValues(
	sql: SqlStorage,
	plan: PeriodPlan,
	period: string,
	armed: readonly Pick<AlertRule, "metric" | "type">[],
	sharded: boolean,
	metricsOf: (period: string) => MetricQuantity[] = (p) => readMetrics(sql, p),
	conversion: HeldConversion | null = null,
) {
	const needsMargin = armed.some((rule) => rule.type === "margin");
	const needsTotal = needsMargin || armed.some((rule) => rule.metric === null);
	const watched = new Set(armed.map((rule) => rule.metric));
	const charges = needsTotal ? plan.charges : plan.charges.filter((charge) => watched.has(charge.metric));
	// A sharded subscription's head adds what its other shards reported (shards.ts); quantities add up rows.
	const reported = sharded ? reportedUsage(sql, period) : { usage: [], metrics: [] };
	const usage = charges.some((charge) => !needsMetering(charge.source))
		? [...readUsage(sql, `${period}-01`, `${period}-31`), ...reported.usage]
		: [];
	const quantities = quantitiesForPlan(charges, usage, [...metricsOf(period), ...reported.metrics]);
	if (!needsTotal) return { quantities, total: Decimal.ZERO, usageAmount: Decimal.ZERO, margin: null };
	const rated = rateUsage(plan, quantities);
	const spent = rated.charges.filter((line) => line.metric !== MINIMUM_METRIC);
	let margin: LiveMargin | null = null;
	if (needsMargin) {
		const costs = periodCosts(sql, period, plan.currency, sharded);
		// GET /v1/usage prorates the base fee of a plan that says so, from the subscription's start.
		const window = periodWindow(period);
		const proration = baseFeeProration(plan.prorate ?? false, window, {
			startedAt: plan.started_at ?? window.start,
			endsAt: null,
		});
		const revenue = proration === null ? rated.total : rateWithProration(plan, quantities, proration).total;
		const percent = revenue.isZero()
			? Decimal.ZERO
			: revenue.sub(costs).mul(HUNDRED).divRoundHalfUp(revenue, 2);
		margin = { revenue, costs, percent };
	}
	// What a threshold invoice bills: the charge lines, without the base fee.
	const usageAmount = Decimal.sum(
		spent.filter((line) => line.metric !== BASE_FEE_METRIC).map((line) => line.amount),
	);
	// The total in the billing currency: each line converted and rounded, as GET /v1/usage converts it.
	const total = Decimal.sum(spent.map((line) => inBilling(line.amount, conversion)));
	return { quantities, total, usageAmount, margin };
}

// ---- the flush's part ----------------------------------------------------------------------------------------

export function readUnflushedTriggers(sql: SqlStorage, rows: number): TriggerRow[] {
	return sql
		.exec<TriggerRow>(
			"SELECT alert_id, period, triggered_at, value FROM alert_triggers WHERE flushed = 0 LIMIT ?",
			rows,
		)
		.toArray();
}

export function triggerStatements(
	d1: D1Database,
	target: FlushTarget,
	rows: TriggerRow[],
): D1PreparedStatement[] {
	if (rows.length === 0) return [];
	return [
		statement(
			d1,
			`INSERT INTO alert_triggers (alert_id, environment, billing_period, triggered_at, value)
			SELECT t.value ->> '$.alert_id', ?1, t.value ->> '$.period', t.value ->> '$.triggered_at', t.value ->> '$.value'
			FROM json_each(?2) AS t WHERE true
			ON CONFLICT (alert_id, billing_period) DO NOTHING`,
			target.environment,
			JSON.stringify(rows),
		),
	];
}

export function markTriggersFlushed(sql: SqlStorage, rows: TriggerRow[]): void {
	if (rows.length === 0) return;
	sql.exec(
		`UPDATE alert_triggers SET flushed = 1 FROM json_each(?) AS f
		WHERE alert_triggers.alert_id = f.value ->> 0 AND alert_triggers.period = f.value ->> 1`,
		JSON.stringify(rows.map((r) => [r.alert_id, r.period])),
	);
}

export const UNFLUSHED_TRIGGERS_SQL = "EXISTS (SELECT 1 FROM alert_triggers WHERE flushed = 0)";
