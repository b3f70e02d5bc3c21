// A small JSON client for setting up bench data through the public API.
export function apiClient(base, key) {
	return async function request(method, path, body) {
		const response = await fetch(`${base}${path}`, {
			method,
			headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
			body: body ? JSON.stringify(body) : undefined,
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${text.slice(0, 500)}`);
		return text ? JSON.parse(text) : null;
	};
}

/** Runs `task` over `items` with at most `concurrency` in flight. */
export async function inParallel(items, concurrency, task) {
	const results = new Array(items.length);
	let next = 0;
	async function worker() {
		while (next < items.length) {
			const index = next++;
			results[index] = await task(items[index], index);
		}
	}
	await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
	return results;
}

export async function timed(fn) {
	const started = performance.now();
	const value = await fn();
	return { seconds: (performance.now() - started) / 1000, value };
}
