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
