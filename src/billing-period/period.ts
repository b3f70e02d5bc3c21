/**
 * Billing periods are UTC calendar months written `YYYY-MM`. Invoicing accepts any past month and the current
 * one (an invoice for the month in progress bills what was metered so far; later usage becomes supplementary).
 */
import { periodBounds } from "../lib/time";

// Years 1970–9999: earlier ones are no billing period of this service (and JS dates read years < 100 as 19xx).
export const BILLING_PERIOD_PATTERN = /^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])$/;

export function isBillingPeriod(text: string): boolean {
	return BILLING_PERIOD_PATTERN.test(text);
}

/** `YYYY-MM` strings of the same width compare like the months they name. */
export function isFuturePeriod(period: string, now: Date): boolean {
	return period > now.toISOString().slice(0, 7);
}

/** The last day of the period, `YYYY-MM-DD`. */
export function lastDayOf(period: string): string {
	return new Date(Date.parse(periodBounds(period).end) - 1).toISOString().slice(0, 10);
}

export interface PeriodWindow {
	period: string;
	/** First instant of the month, ISO 8601. */
	start: string;
	/** First instant of the next month (exclusive). */
	end: string;
	/** First and exclusive-last day as `YYYY-MM-DD`, for the daily usage rollups. */
	firstDay: string;
	endDay: string;
}

export function periodWindow(period: string): PeriodWindow {
	const { start, end } = periodBounds(period);
	return { period, start, end, firstDay: start.slice(0, 10), endDay: end.slice(0, 10) };
}
