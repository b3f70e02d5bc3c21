import { z } from "@hono/zod-openapi";

const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

function isRealDate(text: string): boolean {
	if (BARE_DATE.test(text)) {
		const d = new Date(`${text}T00:00:00.000Z`);
		return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(text);
	}
	return DATE_TIME.test(text) && !Number.isNaN(new Date(text).getTime());
}

/** A `start_date`/`end_date` query value: an ISO 8601 date-time with an offset, or a bare `YYYY-MM-DD`. */
export const DateParam = z
	.string()
	.refine(isRealDate, "Must be an ISO 8601 date (YYYY-MM-DD) or date-time with an offset.")
	.openapi({ example: "2026-11-01" });

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

/** The billing periods (YYYY-MM) whose first instant lies in [start, end). */
export function periodsStartingIn(range: { start: Date; end: Date }): { first: string; last: string } | null {
	const first = new Date(Date.UTC(range.start.getUTCFullYear(), range.start.getUTCMonth(), 1));
	if (first < range.start) first.setUTCMonth(first.getUTCMonth() + 1);
	const lastInstant = new Date(range.end.getTime() - 1);
	const last = new Date(Date.UTC(lastInstant.getUTCFullYear(), lastInstant.getUTCMonth(), 1));
	if (last < first) return null;
	return { first: first.toISOString().slice(0, 7), last: last.toISOString().slice(0, 7) };
}

/** The billing periods (YYYY-MM) that overlap [start, end) at all. */
export function periodsOverlapping(range: { start: Date; end: Date }): { first: string; last: string } {
	const lastInstant = new Date(range.end.getTime() - 1);
	return { first: range.start.toISOString().slice(0, 7), last: lastInstant.toISOString().slice(0, 7) };
}
