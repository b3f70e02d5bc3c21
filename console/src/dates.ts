/** Calendar arithmetic on UTC days (YYYY-MM-DD) and billing periods (YYYY-MM), the API's own units. */

const DAY_MS = 86_400_000;

export function today(): string {
	return new Date().toISOString().slice(0, 10);
}

export function currentPeriod(): string {
	return today().slice(0, 7);
}

/** The period `months` before (negative) or after `period`. */
export function shiftPeriod(period: string, months: number): string {
	const [year, month] = period.split("-").map(Number) as [number, number];
	const date = new Date(Date.UTC(year, month - 1 + months, 1));
	return date.toISOString().slice(0, 7);
}

export function lastDayOfPeriod(period: string): string {
	const [year, month] = period.split("-").map(Number) as [number, number];
	return new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
}

export function isDay(value: string | null): value is string {
	return value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));
}

/** Every day from `start` to `end`, both included. */
export function daysBetween(start: string, end: string): string[] {
	const days: string[] = [];
	for (let t = Date.parse(start); t <= Date.parse(end); t += DAY_MS)
		days.push(new Date(t).toISOString().slice(0, 10));
	return days;
}

export function addDays(day: string, count: number): string {
	return new Date(Date.parse(day) + count * DAY_MS).toISOString().slice(0, 10);
}

export interface DateRange {
	start: string;
	end: string;
	currency: string;
}

/** The range in the page's query, or the last three billing periods up to the end of this one. */
export function rangeFrom(query: URLSearchParams): DateRange {
	const period = currentPeriod();
	const start = query.get("start");
	const end = query.get("end");
	const currency = (query.get("currency") ?? "").toUpperCase();
	return {
		start: isDay(start) ? start : `${shiftPeriod(period, -2)}-01`,
		end: isDay(end) ? end : lastDayOfPeriod(period),
		currency: /^[A-Z]{3}$/.test(currency) ? currency : "USD",
	};
}

/** Why a range cannot be shown, or null. One message for the whole page, instead of one per report on it. */
export function rangeProblem(range: { start: string; end: string }): string | null {
	if (range.start > range.end) {
		return `The range starts after it ends (${range.start} is later than ${range.end}): choose a "From" day on or before the "To" day.`;
	}
	return null;
}
