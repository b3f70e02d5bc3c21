/**
 * A plan change "now" splits its subscription's billing period (docs/plan-versions.md#changing-now): told the
 * instant, each of the subscription's accumulators keys the day rows of that day from the instant on by it
 * (lib/day-keys.ts), so invoicing gives every row to one part. Events of that day counted before the accumulator
 * knew — a few in flight, or timestamped up to five minutes ahead — are moved from the day's row to the split's,
 * from the raw events kept here, in the transaction that notes the instant. The period's plan is learnt again:
 * the later part's plan now rates it (its metered sources are counted again from the raw events, period-plans.ts).
 */
import { dayKeyOf } from "../../../lib/day-keys";
import { periodOf } from "../../../lib/time";
import { parseAccumulatorName } from "../identity";
import { readRawEvents } from "../storage/raw-events";
import { AggregateDeltas } from "./aggregates";
import type { AccumulatorParts } from "./context";

const DAY_MS = 86_400_000;

export async function splitPlan(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	at: string,
): Promise<void> {
	const { store } = parts;
	const identity = parseAccumulatorName(name);
	if (identity.kind !== "sub")
		throw new Error(`Only a subscription's accumulators split periods, not ${name}`);
	store.remember(name, accountId);
	// Told twice (before the change is stored, and after): the second time it only learns the plan again.
	if (store.planSplits.includes(at)) {
		await parts.plans.relearn(identity, periodOf(at));
		return;
	}
	const before = store.planSplits;
	const after = [...before, at];
	const nextDay = new Date(Date.parse(at.slice(0, 10)) + DAY_MS).toISOString();
	const billableFrom = store.billableFrom;
	store.transaction(() => {
		const minus = new AggregateDeltas("daily", -1);
		const plus = new AggregateDeltas("daily", 1);
		for (const event of readRawEvents(store.sql, at, nextDay)) {
			// Events from before the subscription's start are in daily_unbilled, under their day.
			if (billableFrom !== null && event.timestamp < billableFrom) continue;
			const was = dayKeyOf(event.timestamp, before);
			const is = dayKeyOf(event.timestamp, after);
			if (was === is) continue;
			minus.countDay(event, was);
			plus.countDay(event, is);
		}
		minus.applyTo(store.sql, store.sums.daily);
		plus.applyTo(store.sql, store.sums.daily);
		store.notePlanSplit(at);
	});
	await parts.plans.relearn(identity, periodOf(at));
	await parts.flushSoon();
}
