/**
 * GET /v1/usage?subscription_id= for a billing period split by plan changes "now" (docs/plan-versions.md#changing-now):
 * the charges of each part, rated as the invoice will rate them (invoicing/split-rating.ts), from the
 * accumulators' usage of each part — asked as ranges of day keys, since a split day's later rows are keyed by the
 * split's instant (lib/day-keys.ts) — each charge with a description naming its part. Null when the period is one
 * part.
 */
import { and, eq } from "drizzle-orm";
import type { PeriodWindow } from "../billing-period/period";
import { lastDayOf } from "../billing-period/period";
import type { Db } from "../db/client";
import { subscriptionPlanParts } from "../db/schema";
import type { Scope } from "../db/scope";
import { usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import type { Conversion } from "../exchange-rates/convert";
import { includedOf, labelOf, type MeteredLine, regularLine } from "../invoicing/computed";
import { dividedMetrics, type PeriodPart, partPlans, partProration } from "../invoicing/period-parts";
import { rateTheParts } from "../invoicing/split-rating";
import { Decimal } from "../lib/decimal";
import type { PeriodDiscount } from "../pricing/period-discount";
import type { RatedChargeJson } from "../pricing/rate";
import type { RatePlanRow } from "../pricing/rate-plans";
import type { MetricQuantity } from "../pricing/sources";

export interface SplitUsageInput {
	env: Env;
	db: Db;
	scope: Scope;
	subscriptionId: string;
	accumulators: string[];
	window: PeriodWindow;
	/** The plan of the period's last part (the plan in effect for the period). */
	plan: RatePlanRow;
	metrics: MetricQuantity[];
	lifetime: { startedAt: string; endsAt: string | null };
	conversion: Conversion | null;
	discount: PeriodDiscount | null;
}

/** The last day key of a part that ends at `endsAt`: every key sorting before the next part's first. */
const lastKeyBefore = (endsAt: string) => new Date(Date.parse(endsAt) - 1).toISOString();

function chargeOf(line: MeteredLine): RatedChargeJson & { description: string } {
	const included = line.charge === null ? Decimal.ZERO : includedOf(line.charge);
	const billable = line.quantity.sub(included);
	return {
		metric: line.metric,
		model: (line.charge?.model ?? "flat") as RatedChargeJson["model"],
		quantity: line.quantity.toNumber(),
		billable_quantity: (billable.isNegative() ? Decimal.ZERO : billable).toNumber(),
		amount: line.amount.toNumber(),
		description: line.charge === null ? regularLine(line).description : labelOf(line.charge),
	};
}

export async function splitUsageCharges(input: SplitUsageInput) {
	const { db, scope, window } = input;
	const rows = await db
		.select()
		.from(subscriptionPlanParts)
		.where(
			and(
				eq(subscriptionPlanParts.subscriptionId, input.subscriptionId),
				eq(subscriptionPlanParts.period, window.period),
			),
		)
		.orderBy(subscriptionPlanParts.startsAt);
	const last = rows[rows.length - 1];
	if (last === undefined) return null;
	const planOf = await partPlans(db, scope, rows);
	const bounds = [
		...rows.map((row) => ({ startsAt: row.startsAt, endsAt: row.endsAt, plan: planOf(row) })),
		{ startsAt: last.endsAt, endsAt: window.end, plan: input.plan },
	];
	const queries = bounds.map((bound, i) => ({
		startDay: i === 0 ? window.firstDay : bound.startsAt,
		endDay: i === bounds.length - 1 ? lastDayOf(window.period) : lastKeyBefore(bound.endsAt),
	}));
	// The metrics of each part are kept under its first instant (lib/day-keys.ts: partKeyOf).
	const partKeys = bounds.map((bound, i) => (i === 0 ? window.start : bound.startsAt));
	const [perShard, metricsPerShard] = await Promise.all([
		Promise.all(input.accumulators.map((name) => usageAccumulator(input.env, name).billableUsage(queries))),
		Promise.all(
			input.accumulators.map((name) => {
				const accumulator = usageAccumulator(input.env, name);
				return Promise.all(partKeys.map((key) => accumulator.metrics(key)));
			}),
		),
	]);
	const metrics = dividedMetrics(
		bounds,
		metricsPerShard.flatMap((shard) =>
			shard.flatMap((rows, i) => rows.map((row) => ({ ...row, agentId: null, key: partKeys[i] as string }))),
		),
		input.metrics.map((row) => ({ ...row, agentId: null })),
	);
	const parts: PeriodPart[] = bounds.map((bound, i) => ({
		...bound,
		// Shards count disjoint instances: their rows add up (quantitiesForPlan sums rows of one aggregate).
		usage: perShard.flatMap((shard) => shard[i] ?? []).map((row) => ({ ...row, agentId: null })),
		metrics: metrics[i] ?? [],
		proration: partProration(window, bound, input.lifetime),
	}));
	const lines = rateTheParts(
		{
			subscriptionId: input.subscriptionId,
			accountId: "",
			plan: input.plan,
			usage: [],
			sequences: [],
			billedLines: [],
			invoiced: false,
			conversion: input.conversion,
			discount: input.discount,
		},
		parts,
	);
	return {
		currency: input.conversion?.to ?? input.plan.currency,
		charges: lines.map(chargeOf),
		total: Decimal.sum(lines.map((line) => line.amount)).toNumber(),
	};
}
