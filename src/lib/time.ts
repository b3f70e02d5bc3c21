export function nowIso(): string {
	return new Date().toISOString();
}

/** "2026-11" for an instant. Billing periods are UTC calendar months. */
export function periodOf(iso: string): string {
	return iso.slice(0, 7);
}

export function dayOf(iso: string): string {
	return iso.slice(0, 10);
}

/** First instant of a period and of the next one, as ISO strings. */
export function periodBounds(period: string): { start: string; end: string } {
	const [year, month] = period.split("-").map(Number) as [number, number];
	return {
		start: new Date(Date.UTC(year, month - 1, 1)).toISOString(),
		end: new Date(Date.UTC(year, month, 1)).toISOString(),
	};
}

export function previousPeriod(instant: Date): string {
	const d = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth() - 1, 1));
	return d.toISOString().slice(0, 7);
}

export function addPeriods(period: string, months: number): string {
	const [year, month] = period.split("-").map(Number) as [number, number];
	return new Date(Date.UTC(year, month - 1 + months, 1)).toISOString().slice(0, 7);
}
