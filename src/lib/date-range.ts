const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** A bare YYYY-MM-DD that names a real day (not 2026-02-30, not 2026-13-45). */
export function isRealDay(day: string): boolean {
	if (!BARE_DATE.test(day)) return false;
	const d = new Date(`${day}T00:00:00.000Z`);
	return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(day);
}

/**
 * An ISO 8601 date-time with an offset, or a bare `YYYY-MM-DD`, naming a real instant. The date part is checked on
 * its own: Date.parse rolls "2026-02-30T10:00:00Z" over to March 2 without a word.
 */
export function isRealDate(text: string): boolean {
	return (
		isRealDay(text) ||
		(DATE_TIME.test(text) && isRealDay(text.slice(0, 10)) && !Number.isNaN(Date.parse(text)))
	);
}

/**
 * The half-open instant range [start, end) that an inclusive pair of query dates covers: a bare end date covers
 * that whole UTC day.
 */
export function instantRange(startDate: string, endDate: string): { start: Date; end: Date } {
	const start = new Date(BARE_DATE.test(startDate) ? `${startDate}T00:00:00.000Z` : startDate);
	const end = BARE_DATE.test(endDate)
		? new Date(Date.parse(`${endDate}T00:00:00.000Z`) + 86_400_000)
		: new Date(Date.parse(endDate) + 1);
	return { start, end };
}

type PeriodSpan = { first: string; last: string };

// Periods are written with four-digit years, so they sort as text only between 0000-01 and 9999-12. An offset can
// push an instant just outside (9999-12-31T23:00:00-05:00 is in year 10000), where toISOString writes "+010000".
const FIRST_PERIOD = "0000-01";
const LAST_PERIOD = "9999-12";

function clampedSpan(first: Date, last: Date): PeriodSpan | null {
	if (last < first || first.getUTCFullYear() > 9999 || last.getUTCFullYear() < 0) return null;
	return {
		first: first.getUTCFullYear() < 0 ? FIRST_PERIOD : first.toISOString().slice(0, 7),
		last: last.getUTCFullYear() > 9999 ? LAST_PERIOD : last.toISOString().slice(0, 7),
	};
}

/** Midnight of the 1st of the instant's UTC month (not Date.UTC, which reads years 0–99 as 1900–1999). */
function monthStart(instant: Date): Date {
	const start = new Date(instant.getTime());
	start.setUTCDate(1);
	start.setUTCHours(0, 0, 0, 0);
	return start;
}

/** The billing periods (YYYY-MM) whose first instant lies in [start, end); null when none does. */
export function periodsStartingIn(range: { start: Date; end: Date }): PeriodSpan | null {
	const first = monthStart(range.start);
	if (first < range.start) first.setUTCMonth(first.getUTCMonth() + 1);
	return clampedSpan(first, monthStart(new Date(range.end.getTime() - 1)));
}

/** The billing periods (YYYY-MM) that overlap [start, end) at all; null when the range is empty. */
export function periodsOverlapping(range: { start: Date; end: Date }): PeriodSpan | null {
	if (range.end <= range.start) return null;
	return clampedSpan(monthStart(range.start), monthStart(new Date(range.end.getTime() - 1)));
}
