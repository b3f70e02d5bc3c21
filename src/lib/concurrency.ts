/**
 * Runs `work` over `items` with at most `limit` at a time. A Worker opens only a few outgoing connections at once
 * and queues the rest, so firing every call together makes the late ones wait — and time out — in that queue.
 */
export async function forEachLimited<T>(
	items: readonly T[],
	limit: number,
	work: (item: T) => Promise<unknown>,
): Promise<void> {
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const item = items[next++] as T;
			await work(item);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
