/**
 * The memories of sums: what the accumulator last wrote of its own rows, so a warm counting pass adds to a sum
 * without reading it back. They may only ever hold what a committed transaction stored: the store clears them
 * when a transaction fails (store.ts), a writer that changes rows without them clears them too, and a full one
 * starts over. They never decide anything a read of the table would not.
 */
/**
 * The stored value of rows this object wrote, by the row's key parts joined by SEPARATOR: the sums of daily rows
 * (by day, agent key, kind, type and field) or the quantities of metrics (metrics.ts), as this object last wrote
 * them. The accumulator is the only writer of its rows, so what it wrote is what is stored, as long as the
 * transaction that wrote it committed. Its owner (store.ts) clears it whenever a transaction fails; its size is
 * bounded.
 */
export class StoredValues {
	private readonly values = new Map<string, string>();

	constructor(private readonly maxRows = 10_000) {}

	has(id: string): boolean {
		return this.values.has(id);
	}

	get(id: string): string | undefined {
		return this.values.get(id);
	}

	set(id: string, value: string): void {
		if (!this.values.has(id) && this.values.size >= this.maxRows) this.clear();
		this.values.set(id, value);
	}

	clear(): void {
		this.values.clear();
	}
}

/**
 * The stored value of each row (undefined: not stored), by its id: from `known` where it has it, the others by
 * one call of `read`, given their indices, which answers the rows it found as [position in its argument, value].
 * Every value is looked up before the caller notes a new one: noting may clear `known` when it is full.
 */
export function storedBefore(
	ids: readonly string[],
	known: StoredValues | undefined,
	read: (unknown: number[]) => Iterable<[position: number, value: string]>,
): (string | undefined)[] {
	const unknown = ids.flatMap((id, i) => (known?.has(id) ? [] : [i]));
	const found = new Map<number, string>();
	if (unknown.length > 0) {
		for (const [position, value] of read(unknown)) found.set(unknown[position] as number, value);
	}
	return ids.map((id, i) => known?.get(id) ?? found.get(i));
}
