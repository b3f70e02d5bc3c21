/**
 * The plan in effect for each billing period of a subscription's accumulator, learnt once per period: from this
 * object's memory, else its storage (plan_periods), else D1 — one read the first time a period's events arrive.
 * A plan never changes once created and a subscription's plan changes only from a next period (docs/billing.md#subscriptions), so what is
 * learnt stays true. When a period is learnt after some of its events were counted (an accumulator of an earlier
 * version), its metrics are counted again from the raw events kept here (metrics.ts: rebuildPeriod).
 *
 * Instance accumulators bill nothing and learn no plan.
 */
import type { Env } from "../../../env";
import { periodBounds, periodOf } from "../../../lib/time";
import type { Charge } from "../../../pricing/charges";
import { effectiveCharges } from "../../../pricing/effective-plan";
import type { PriceOverride } from "../../../pricing/price-overrides";
import { type MeteredSource, meteredSources } from "../../../pricing/sources";
import type { AccumulatorIdentity } from "../identity";
import type { ModelPriceCache } from "../storage/prices";
import { readRawEvents } from "../storage/raw-events";
import { METRICS_SCHEMA } from "../storage/schema";
import type { StoredValues } from "../storage/stored-values";
import { type PeriodParts, rebuildPeriod } from "./metrics";
import { type Billing, RateBook } from "./rates";

/** What the accumulator keeps of a plan: enough to rate the period and to know its sources. */
export interface PeriodPlan {
	id: string;
	currency: string;
	base_fee: string;
	minimum_amount: string;
	charges: Charge[];
	/**
	 * Whether the plan prorates its base fee, and when the subscription started: what a margin alert's revenue
	 * needs to rate the base fee as GET /v1/usage does. Absent from periods learnt by earlier versions (no
	 * proration then).
	 */
	prorate?: boolean;
	started_at?: string;
	/** The subscription's billing currency (docs/currencies.md); the plan's when absent (learnt by earlier versions). */
	billing_currency?: string;
	/**
	 * The charges of the plans of the period's earlier parts when a plan change "now" split it (plan-splits.ts):
	 * their sources are counted per part too. Absent when the period did not split.
	 */
	earlier_charges?: Charge[];
}

/** What the book needs of the accumulator's store (store.ts): its tables, its metrics cache, its transaction. */
export interface PlanStore {
	readonly sql: SqlStorage;
	readonly metricQuantities: StoredValues;
	/** The model prices `cost` sources are counted with (prices.ts). */
	readonly prices?: ModelPriceCache;
	transaction<T>(work: () => T): T;
	/** The instants its subscription's periods split at (plan-splits.ts). */
	readonly planSplits?: readonly string[];
}

interface Learnt {
	plan: PeriodPlan;
	sources: MeteredSource[];
	parts: PeriodParts | null;
}

const NO_SOURCES: readonly MeteredSource[] = [];
// A subscription D1 does not know (a bare accumulator of a test) is asked again at most this often.
const UNKNOWN_RETRY_MS = 60_000;

export class PlanBook {
	private readonly periods = new Map<string, Learnt>();
	private unknownUntil = 0;
	private tablesReady = false;
	/** The conversions to the billing currency, read at most every 30 s (rates.ts). */
	readonly rates = new RateBook();

	constructor(
		private readonly store: PlanStore,
		private readonly env: Env,
	) {}

	/** The sources of a period already learnt (none for a period without a plan). Synchronous: the hot path. */
	sourcesOf = (period: string): readonly MeteredSource[] => this.periods.get(period)?.sources ?? NO_SOURCES;

	/** The parts of a period split by plan changes "now", as learnt; null for a period that did not split. */
	partsOf = (period: string): PeriodParts | null => this.periods.get(period)?.parts ?? null;

	planOf(period: string): PeriodPlan | null {
		return this.periods.get(period)?.plan ?? null;
	}

	/**
	 * Learns the plans of the events' periods that are not known yet, and reads the conversions of those periods
	 * to the billing currency when they are due (rates.ts).
	 */
	async learn(identity: AccumulatorIdentity, timestamps: Iterable<string>): Promise<void> {
		if (identity.kind !== "sub" || Date.now() < this.unknownUntil) return;
		const periods = new Set<string>();
		for (const timestamp of timestamps) periods.add(periodOf(timestamp));
		for (const period of periods) {
			if (!this.periods.has(period)) await this.learnPeriod(identity, period);
		}
		for (const period of periods) {
			const plan = this.planOf(period);
			if (plan?.billing_currency === undefined) continue;
			await this.rates.refresh(this.env.DB, identity.environment, plan.currency, plan.billing_currency);
		}
	}

	/** The currency the period's amounts are compared in, converted now; null while no rate is in effect. */
	billingOf(plan: PeriodPlan): Billing | null {
		return this.rates.billing(plan.currency, plan.billing_currency ?? plan.currency);
	}

	/** Forgets what it learnt of a period and learns it again: its plan changed "now" (plan-splits.ts). */
	async relearn(identity: AccumulatorIdentity, period: string): Promise<void> {
		if (identity.kind !== "sub") return;
		this.ensureTables();
		this.store.sql.exec("DELETE FROM plan_periods WHERE period = ?", period);
		this.periods.delete(period);
		this.unknownUntil = 0;
		await this.learnPeriod(identity, period);
	}

	private async learnPeriod(identity: AccumulatorIdentity, period: string): Promise<void> {
		const sql = this.store.sql;
		this.ensureTables();
		const stored = sql
			.exec<{ plan: string }>("SELECT plan FROM plan_periods WHERE period = ?", period)
			.toArray()[0];
		if (stored) {
			this.remember(period, JSON.parse(stored.plan) as PeriodPlan);
			return;
		}
		const splits = this.splitsOf(period);
		const plan = await fetchPlanInEffect(this.env.DB, identity, period, splits.length > 0);
		// An unknown subscription (a test's bare accumulator) meters nothing more than the daily rows.
		if (plan === null) {
			this.unknownUntil = Date.now() + UNKNOWN_RETRY_MS;
			return;
		}
		if (this.periods.has(period)) return; // learnt by a concurrent call while D1 answered
		const learnt = this.learnt(period, plan);
		const counted = learnt.parts?.sources ?? learnt.sources;
		// A rebuild rewrites stored metrics: a rollback makes the store forget the quantities it knew.
		this.store.transaction(() => {
			sql.exec(
				"INSERT OR REPLACE INTO plan_periods (period, plan) VALUES (?, ?)",
				period,
				JSON.stringify(plan),
			);
			if (counted.length > 0 && countedBefore(sql, period)) {
				const { start, end } = periodBounds(period);
				rebuildPeriod(
					sql,
					period,
					learnt.sources,
					readRawEvents(sql, start, end),
					this.store.metricQuantities,
					this.store.prices,
					learnt.parts,
				);
			}
		});
		this.periods.set(period, learnt);
	}

	private remember(period: string, plan: PeriodPlan): void {
		this.periods.set(period, this.learnt(period, plan));
	}

	private splitsOf(period: string): string[] {
		return (this.store.planSplits ?? []).filter((split) => periodOf(split) === period);
	}

	/** A period's sources, and on a split period its parts with the sources of every part's plan. */
	private learnt(period: string, plan: PeriodPlan): Learnt {
		const sources = meteredSources(plan.charges, plan.currency);
		const splits = this.splitsOf(period);
		if (splits.length === 0) return { plan, sources, parts: null };
		const all = meteredSources([...plan.charges, ...(plan.earlier_charges ?? [])], plan.currency);
		return { plan, sources, parts: { start: periodBounds(period).start, splits, sources: all } };
	}

	private ensureTables(): void {
		if (this.tablesReady) return;
		this.store.sql.exec(METRICS_SCHEMA);
		this.tablesReady = true;
	}
}

/** Whether events of the period were counted already (the daily rows exist once anything was). */
function countedBefore(sql: SqlStorage, period: string): boolean {
	const daily = sql
		.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'daily'")
		.one().n;
	if (daily === 0) return false;
	return (
		sql
			.exec<{ n: number }>(
				"SELECT EXISTS (SELECT 1 FROM daily WHERE day >= ? AND day <= ? || '~') AS n",
				`${period}-01`,
				`${period}-31`,
			)
			.one().n === 1
	);
}

/**
 * The plan history row with the greatest effective period ≤ P; else the subscription's own plan (load.ts), at its
 * version. The row's price overrides are applied, so alerts on amounts see the subscription's negotiated prices.
 */
async function fetchPlanInEffect(
	d1: D1Database,
	identity: AccumulatorIdentity,
	period: string,
	split: boolean,
): Promise<PeriodPlan | null> {
	const row = await d1
		.prepare(
			`SELECT p.id, v.currency, v.base_fee, v.minimum_amount, v.charges, v.prorate, s.started_at,
				s.billing_currency, (
				SELECT sp.price_overrides FROM subscription_plans AS sp
				WHERE sp.subscription_id = s.id AND sp.effective_period <= ?3
				ORDER BY sp.effective_period DESC LIMIT 1) AS price_overrides
			FROM subscriptions AS s
			JOIN rate_plans AS p ON p.environment = s.environment AND p.id = coalesce((
				SELECT sp.rate_plan_id FROM subscription_plans AS sp
				WHERE sp.subscription_id = s.id AND sp.effective_period <= ?3
				ORDER BY sp.effective_period DESC LIMIT 1), s.rate_plan_id)
			-- The subscription's version of the plan (docs/plan-versions.md).
			JOIN rate_plan_versions AS v ON v.environment = p.environment AND v.rate_plan_id = p.id
				AND v.version = coalesce((
				SELECT sp.rate_plan_version FROM subscription_plans AS sp
				WHERE sp.subscription_id = s.id AND sp.effective_period <= ?3
				ORDER BY sp.effective_period DESC LIMIT 1), s.rate_plan_version)
			WHERE s.environment = ?1 AND s.id = ?2`,
		)
		.bind(identity.environment, identity.id, period)
		.first<{
			id: string;
			currency: string;
			base_fee: string;
			minimum_amount: string;
			charges: string;
			prorate: number;
			started_at: string;
			billing_currency: string | null;
			price_overrides: string | null;
		}>();
	if (!row) return null;
	const overrides = row.price_overrides ? (JSON.parse(row.price_overrides) as PriceOverride[]) : null;
	return {
		id: row.id,
		currency: row.currency,
		base_fee: row.base_fee,
		minimum_amount: row.minimum_amount,
		charges: effectiveCharges(JSON.parse(row.charges) as Charge[], overrides),
		prorate: row.prorate === 1,
		started_at: row.started_at,
		...(row.billing_currency === null ? {} : { billing_currency: row.billing_currency }),
		...(split ? { earlier_charges: await fetchEarlierCharges(d1, identity, period) } : {}),
	};
}

/** The charges of the plans that rated the period's earlier parts (subscription_plan_parts), at their prices. */
async function fetchEarlierCharges(
	d1: D1Database,
	identity: AccumulatorIdentity,
	period: string,
): Promise<Charge[]> {
	const { results } = await d1
		.prepare(
			`SELECT v.charges, pp.price_overrides FROM subscription_plan_parts AS pp
			JOIN rate_plan_versions AS v ON v.environment = ?1 AND v.rate_plan_id = pp.rate_plan_id
				AND v.version = pp.rate_plan_version
			WHERE pp.subscription_id = ?2 AND pp.period = ?3`,
		)
		.bind(identity.environment, identity.id, period)
		.all<{ charges: string; price_overrides: string | null }>();
	return results.flatMap((row) =>
		effectiveCharges(
			JSON.parse(row.charges) as Charge[],
			row.price_overrides ? (JSON.parse(row.price_overrides) as PriceOverride[]) : null,
		),
	);
}
