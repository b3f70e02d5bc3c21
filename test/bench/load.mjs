// Load generation on loopback, always bounded in time: autocannon here, wrk in wrk.mjs (the throughput ratios),
// and an open loop paced by this process for latency.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
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
	bodies,
}) {
	// `bodies`: request bodies sent in turn (e.g. events of many instances), instead of one `body`.
	let next = 0;
	const rotating = bodies
		? [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }]
		: undefined;
	const result = await autocannon({
		url,
		method,
		headers,
		body,
		connections,
		duration: seconds,
		...(rate ? { overallRate: rate } : {}),
		...(requests ? { requests } : {}),
		...(rotating ? { requests: rotating } : {}),
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
		seconds: result.duration,
		total: result.requests.total,
		p50: result.latency.p50,
		p99: result.latency.p99,
		mean: result.latency.average,
		failures,
	};
}

/**
 * Loads several routes in turn, `rounds` times each, so that every route sees the same share of whatever else
 * the machine is doing meanwhile: figures from a noisy machine stay comparable. Answers per route the requests
 * per second and the mean latency over all its rounds and, given `cpu` (a reading of the service's CPU time per
 * process, cpu.mjs), the CPU microseconds each process spent per request of the route. A spec's `generator`
 * (wrk.mjs's `wrkLoad`) loads it instead of autocannon. A spec's `settleMs` waits that long after each of its
 * windows and counts the work done meanwhile as the route's (below).
 */
export async function interleaved(specs, { rounds = 3, seconds = 10, cpu } = {}) {
	const totals = specs.map(() => ({ requests: 0, seconds: 0, latencySum: 0, cpu: {} }));
	const runtime = "worker runtime";
	for (let round = 0; round < rounds; round++) {
		for (const [i, spec] of specs.entries()) {
			const before = cpu?.();
			const { generator = load, settleMs, ...options } = spec;
			const run = await generator({ ...options, seconds: Math.max(1, Math.round(seconds / rounds)) });
			const after = cpu?.();
			const total = totals[i];
			total.requests += run.total;
			total.seconds += run.seconds;
			total.latencySum += run.mean * run.total;
			for (const [role, used] of Object.entries(after ?? {})) {
				total.cpu[role] = (total.cpu[role] ?? 0) + used - (before?.[role] ?? 0);
			}
			// The work its requests left behind is theirs, not the next route's (settle).
			if (settleMs && after?.[runtime] !== undefined) {
				const left = await settle(() => cpu()[runtime], {
					before: before[runtime],
					after: after[runtime],
					seconds: run.seconds,
					settleMs,
				});
				total.cpu[runtime] += left.cpu;
				total.seconds += left.seconds;
			}
		}
	}
	return totals.map((t) => ({
		// A route none of whose requests answered in its time reads 0 req/s, and NaN per request.
		rps: t.requests / t.seconds,
		mean: t.requests > 0 ? t.latencySum / t.requests : Number.NaN,
		cpuPerRequest: Object.fromEntries(
			Object.entries(t.cpu).map(([role, used]) => [role, t.requests > 0 ? used / t.requests : Number.NaN]),
		),
	}));
}

/**
 * Waits `settleMs` after a load for the work its requests left behind (an accumulator flushes seconds after its
 * events) and answers it as the load's: the runtime CPU spent meanwhile beyond what the idle runtime uses (read
 * over one more second), and the seconds the thread, as loaded as it was during the load, would have needed for
 * it. `readRuntime` reads the runtime's CPU; `before` and `after` are its readings around the load of `seconds`.
 */
export async function settle(readRuntime, { before, after, seconds, settleMs }) {
	await sleep(settleMs);
	const settled = readRuntime();
	await sleep(1000);
	const idlePerMs = (readRuntime() - settled) / 1000;
	const left = Math.max(0, settled - after - idlePerMs * settleMs);
	const busyPerSecond = (after - before) / seconds;
	return { cpu: left, seconds: busyPerSecond > 0 ? left / busyPerSecond : 0 };
}

/**
 * Latency at a steady rate: one request every 1/rate seconds, sent when due whether or not earlier ones have
 * answered (an open loop), each timed from when it was due, so a stall counts against every request it delays.
 * (autocannon's `overallRate` sends each second's quota as fast as it can at the start of the second, so its
 * latencies are those of a burst waiting in a queue, not of a steady rate.)
 */
export async function paced({
	url,
	method = "GET",
	headers = {},
	body,
	bodies,
	rate,
	seconds,
	expectedStatus,
}) {
	const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
	// `bodies`: sent in turn, as wrk.mjs does.
	const send = (i) =>
		new Promise((resolve, reject) => {
			const request = http.request(url, { method, headers, agent }, (response) => {
				response.resume();
				response.on("end", () => resolve(response.statusCode));
			});
			request.on("error", reject);
			request.end(bodies ? bodies[i % bodies.length] : body);
		});
	const expected = (status) => (expectedStatus ? status === expectedStatus : status >= 200 && status < 300);
	const latencies = [];
	let failures = 0;
	const count = Math.round(rate * seconds);
	const start = performance.now();
	const sent = [];
	for (let i = 0; i < count; i++) {
		const due = start + (i * 1000) / rate;
		const wait = due - performance.now();
		if (wait > 0) await sleep(wait);
		sent.push(
			send(i).then(
				(status) => (expected(status) ? latencies.push(performance.now() - due) : failures++),
				() => failures++,
			),
		);
	}
	await Promise.all(sent);
	agent.destroy();
	if (failures > count * 0.01)
		throw new Error(`${method} ${url}: ${failures} of ${count} paced requests failed`);
	latencies.sort((a, b) => a - b);
	const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
	return { total: count, failures, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) };
}
