/**
 * The dunning schedule (docs/payments.md#dunning): after the first failed attempt, a payment is tried again on
 * each of DUNNING_RETRY_DAYS counted from that first failure ("1,4,9": a day, four days and nine days after it).
 * When the failures outnumber the retry days, the collection has failed.
 */
const DAY_MS = 86_400_000;

/** When the next retry runs after `attempts` failures, or null when none is left. */
export function nextAttemptAt(
	firstFailedAt: string,
	attempts: number,
	retryDays: readonly number[],
): string | null {
	const day = retryDays[attempts - 1];
	if (day === undefined) return null;
	return new Date(Date.parse(firstFailedAt) + day * DAY_MS).toISOString();
}
