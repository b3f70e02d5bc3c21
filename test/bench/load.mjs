// Load generation on loopback with autocannon, always bounded in time.
import autocannon from "autocannon";

export async function load({ url, method = "GET", headers = {}, body, connections = 64, seconds = 10, rate }) {
	const result = await autocannon({
		url,
		method,
		headers,
		body,
		connections,
		duration: seconds,
		...(rate ? { overallRate: rate } : {}),
	});
	const failures = result.errors + result.timeouts + result.non2xx;
	if (failures > 0 && failures > result.requests.total * 0.01) {
		throw new Error(`${method} ${url}: ${failures} of ${result.requests.total} requests failed`);
	}
	return {
		rps: result.requests.average,
		total: result.requests.total,
		p50: result.latency.p50,
		p99: result.latency.p99,
		mean: result.latency.average,
		failures,
	};
}
