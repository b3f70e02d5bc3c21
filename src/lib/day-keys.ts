/**
 * The key of a day row of usage (the accumulator's `daily` and D1's `usage_daily`): the UTC day of the events,
 * `YYYY-MM-DD` — except on a day a plan change "now" split (docs/plan-versions.md#changing-now), where the events
 * from the split on are kept under the split's instant, `YYYY-MM-DDTHH:MM:SS.sssZ`. Such a key sorts after its
 * day and before the next one, so every reader of a range of days still finds it; invoicing reads where each row
 * starts (segmentStartOf) to give it to the part of the period it lies in. Keys never mix two parts.
 */

/** The key of an event's day row, given the instants the subscription's periods split at (any order). */
export function dayKeyOf(timestamp: string, splits: readonly string[]): string {
	const day = timestamp.slice(0, 10);
	let key = day;
	for (const split of splits) {
		if (split.slice(0, 10) === day && split <= timestamp && split > key) key = split;
	}
	return key;
}

/** The first instant a day row may hold: its split's instant, or the start of its day. */
export function segmentStartOf(dayKey: string): string {
	return dayKey.length > 10 ? dayKey : `${dayKey}T00:00:00.000Z`;
}

/** The UTC day of a day row's key. */
export const dayOfKey = (dayKey: string): string => dayKey.slice(0, 10);

/**
 * The key of the part of its billing period an event lies in, for the quantities kept per period (filtered, max
 * and unique_count sources) of a period split by plan changes "now": the instant the part starts, the period's
 * first instant for the first part. `splits` are those of the event's period (any order).
 */
export function partKeyOf(timestamp: string, periodStart: string, splits: readonly string[]): string {
	let key = periodStart;
	for (const split of splits) if (split <= timestamp && split > key) key = split;
	return key;
}
