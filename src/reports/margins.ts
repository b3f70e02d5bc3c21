/**
 * Margins of one billing period (docs/margins.md). A closed period is the P&L of that month: invoiced revenue and
 * recorded costs, read by the same functions as GET /v1/reports/pnl. The current, open period is live: revenue is
 * what its invoices would be if it closed now — the invoices already issued for it plus, for every subscription
 * active in it, the draft the upcoming invoice would show — and costs are those recorded so far. Subscriptions are
 * rated in groups, as invoice generation does: their accumulators flushed together, the group's state read in one
 * D1 round trip, so the work grows with the accumulators, never with per-subscription reads.
 *
 * By model: costs by the model of their LLM calls; revenue goes to a model only through a charge whose filter
 * names exactly one model, everything else (base fees, other charges, other costs) to the unattributed row.
 */
import { sql } from "drizzle-orm";
import { isFuturePeriod, periodWindow } from "../billing-period/period";
import { type CostRecord, findCostRecords } from "../costs/costs";
import { database } from "../db/client";
import { ratePlanVersions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { flushAccumulators, subscriptionAccumulators } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { computeInvoice } from "../invoicing/computed";
import { loadPeriodStates, subscriptionsInPeriod } from "../invoicing/load";
import { Decimal } from "../lib/decimal";
import { validationError } from "../lib/errors";
import { periodBounds, periodOf } from "../lib/time";
import type { Charge } from "../pricing/charges";
import { type PnlFigures, type PnlRow, pnlBreakdown, pnlFigures } from "./pnl";
import { type RevenueGrouping, type RevenueLine, revenueLines, UNATTRIBUTED } from "./revenue";

export type MarginGrouping = RevenueGrouping | "model";

export interface MarginsReport extends PnlFigures {
	billing_period: string;
	status: "open" | "closed";
	currency: string;
	breakdown: PnlRow[];
}

// Subscriptions rated per group: their accumulators are flushed together, their state read in one batch.
const SUBSCRIPTIONS_PER_GROUP = 50;

export async function marginsOfPeriod({
	env,
	scope,
	billingPeriod,
	groupBy,
	currency,
	now = new Date(),
}: {
	env: Env;
	scope: Scope;
	billingPeriod: string;
	groupBy?: MarginGrouping;
	currency: string;
	now?: Date;
}): Promise<MarginsReport> {
	if (isFuturePeriod(billingPeriod, now)) {
		throw validationError(
			"billing_period",
			`${billingPeriod} has not begun; ask for a past or the current month.`,
		);
	}
	const db = database(env.DB);
	const open = billingPeriod === periodOf(now.toISOString());
	const { start, end } = periodBounds(billingPeriod);
	const periods = { first: billingPeriod, last: billingPeriod };
	const [issued, drafted] = await Promise.all([
		// The open period's drafts are part of what it would bill if it closed now.
		revenueLines(db, scope, { start: new Date(start), end: new Date(end) }, currency, { drafts: open }),
		open ? upcomingLines(env, scope, billingPeriod, currency) : [],
	]);
	// Costs are read after the drafts: rating flushed the subscriptions' accumulators, so their costs are in D1.
	const costRecords = await findCostRecords(db, scope, { currency, periods });
	const lines = [...issued, ...drafted];
	const totals = pnlFigures(
		Decimal.sum(lines.map((line) => line.amount)),
		Decimal.sum(costRecords.map((record) => record.amount)),
	);
	let breakdown: PnlRow[] = [];
	if (groupBy === "model") breakdown = await modelBreakdown(env, scope, lines, costRecords);
	else if (groupBy !== undefined)
		breakdown = await pnlBreakdown(db, scope, lines, costRecords, groupBy, currency);
	return {
		billing_period: billingPeriod,
		status: open ? "open" : "closed",
		currency,
		...totals,
		breakdown,
	};
}

/** The lines the current period's upcoming invoices would add, of every subscription active in it. */
async function upcomingLines(
	env: Env,
	scope: Scope,
	period: string,
	currency: string,
): Promise<RevenueLine[]> {
	const db = database(env.DB);
	const window = periodWindow(period);
	const inPeriod = await subscriptionsInPeriod(db, scope, window);
	const lines: RevenueLine[] = [];
	for (let i = 0; i < inPeriod.length; i += SUBSCRIPTIONS_PER_GROUP) {
		const group = inPeriod.slice(i, i + SUBSCRIPTIONS_PER_GROUP);
		await flushAccumulators(
			env,
			group.flatMap((s) => subscriptionAccumulators(scope.environment, s.id, s.shards)),
		);
		for (const state of await loadPeriodStates(db, scope, window, group)) {
			const draft = computeInvoice(state);
			if (draft === null || draft.currency !== currency) continue;
			for (const line of draft.lines) {
				lines.push({
					billingPeriod: period,
					accountId: draft.accountId,
					ratePlanId: draft.ratePlanId,
					metric: line.metric,
					amount: line.amount,
					agentShares: line.agentShares,
				});
			}
		}
	}
	return lines;
}

/** The one model a charge's filter names, or null when it names none or several. */
export function modelOfCharge(charge: Charge): string | null {
	const named = charge.source.filter?.model;
	if (typeof named === "string") return named;
	if (Array.isArray(named) && named.length === 1) return named[0] as string;
	return null;
}

/** Revenue and costs per model (null: unattributed). Pure, so properties can test it. */
export function marginsByModel(
	lines: RevenueLine[],
	costRecords: CostRecord[],
	chargeModels: Map<string, Map<string, string | null>>,
): Map<string | null, PnlFigures> {
	const revenue = new Map<string | null, Decimal>();
	for (const line of lines) {
		const model = chargeModels.get(line.ratePlanId)?.get(line.metric) ?? null;
		revenue.set(model, (revenue.get(model) ?? Decimal.ZERO).add(line.amount));
	}
	const costs = new Map<string | null, Decimal>();
	for (const record of costRecords) {
		costs.set(record.model, (costs.get(record.model) ?? Decimal.ZERO).add(record.amount));
	}
	const rows = new Map<string | null, PnlFigures>();
	for (const key of new Set([...revenue.keys(), ...costs.keys()])) {
		rows.set(key, pnlFigures(revenue.get(key) ?? Decimal.ZERO, costs.get(key) ?? Decimal.ZERO));
	}
	return rows;
}

/**
 * Per plan, the model each charge's metric is attributed to (one read for every plan of the lines). Every version
 * of the plan is read, oldest first, so lines billed by an earlier version are attributed too and a metric's
 * latest pricing wins (docs/plan-versions.md).
 */
async function chargeModelsOf(
	env: Env,
	scope: Scope,
	planIds: string[],
): Promise<Map<string, Map<string, string | null>>> {
	if (planIds.length === 0) return new Map();
	const rows = await database(env.DB)
		.select({ id: ratePlanVersions.ratePlanId, charges: ratePlanVersions.charges })
		.from(ratePlanVersions)
		.where(
			inScope(
				scope,
				ratePlanVersions,
				sql`${ratePlanVersions.ratePlanId} IN (SELECT value FROM json_each(${JSON.stringify(planIds)}))`,
			),
		)
		.orderBy(ratePlanVersions.ratePlanId, ratePlanVersions.version);
	const models = new Map<string, Map<string, string | null>>();
	for (const row of rows) {
		const plan = models.get(row.id) ?? new Map<string, string | null>();
		for (const charge of row.charges as Charge[]) plan.set(charge.metric, modelOfCharge(charge));
		models.set(row.id, plan);
	}
	return models;
}

/** Sorted as the P&L breakdown: revenue descending, then costs ascending, unattributed last among equals. */
async function modelBreakdown(
	env: Env,
	scope: Scope,
	lines: RevenueLine[],
	costRecords: CostRecord[],
): Promise<PnlRow[]> {
	const chargeModels = await chargeModelsOf(env, scope, [...new Set(lines.map((line) => line.ratePlanId))]);
	return [...marginsByModel(lines, costRecords, chargeModels)]
		.map(([id, figures]) => ({ id, name: id ?? UNATTRIBUTED, ...figures }))
		.sort(
			(a, b) =>
				b.revenue.compare(a.revenue) ||
				a.costs.compare(b.costs) ||
				(a.id === b.id ? 0 : a.id === null ? 1 : b.id === null ? -1 : a.id < b.id ? -1 : 1),
		);
}
