/**
 * JSON.stringify of a string (or null) that remembers the last value it wrote. The writers of a batch's lines
 * (an answer, an archive object) call one per field that repeats from event to event — agent key, type,
 * subscription — and so serialize a run of equal values once.
 */
export function repeatedJson(): (value: string | null) => string {
	let last: string | null | undefined;
	let json = "";
	return (value) => {
		if (value !== last) {
			last = value;
			json = JSON.stringify(value);
		}
		return json;
	};
}

/**
 * One text per JSON value, whatever the key order or whitespace it arrived with: object keys sorted, no spaces.
 * Two requests are the same request when these are equal (the Idempotency-Key check compares them).
 */
export function canonicalJson(value: unknown): string {
	return JSON.stringify(value, (_key, item: unknown) => {
		if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
		const sorted: Record<string, unknown> = {};
		for (const name of Object.keys(item).sort()) sorted[name] = (item as Record<string, unknown>)[name];
		return sorted;
	});
}
