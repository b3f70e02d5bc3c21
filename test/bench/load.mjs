// Load generation on loopback with autocannon, always bounded in time.
import autocannon from "autocannon";

export async function load({
	url,
	method = "GET",
	headers = {},
	body,
	connections = 64,
	seconds = 10,
	rate,
	expectedStatus,
	requests,
}) {
	const result = await autocannon({
		url,
		method,
		headers,
		body,
		connections,
		duration: seconds,
		...(rate ? { overallRate: rate } : {}),
		...(requests ? { requests } : {}),
	});
	// A route measured for its error answer (e.g. 404 after the gate) counts that status as success.
	const unexpected = expectedStatus
		? result.requests.total - (result.statusCodeStats[expectedStatus]?.count ?? 0)
		: result.non2xx;
	const failures = result.errors + result.timeouts + unexpected;
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
