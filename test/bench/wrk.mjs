// Closed-loop throughput with wrk (Debian's `wrk`): a C load generator that leaves a route on this 2-core machine
// its capacity, where autocannon's own CPU holds `GET /healthz` to about 60% of it (issue 31). Request bodies come
// from a Lua script, rotating over the given bodies; the figures are parsed from wrk's summary (`--latency`).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const onPath = () => {
	try {
		execFileSync("wrk", ["--version"], { stdio: "ignore" });
		return true;
	} catch (error) {
		// wrk prints its usage and exits 1 on --version: it is there. ENOENT: it is not.
		return error.code !== "ENOENT";
	}
};

/**
 * Whether wrk can be run, installing Debian's package when it is missing (as root, or through `sudo -n`).
 * Answers a reason when it cannot be had, so that the bench can say which generator its ratios use.
 */
export function ensureWrk() {
	if (onPath()) return { ok: true };
	if (!process.env.BENCH_NO_INSTALL) {
		const root = process.getuid?.() === 0;
		const [command, prefix] = root ? ["apt-get", []] : ["sudo", ["-n", "apt-get"]];
		const apt = (...args) =>
			execFileSync(command, [...prefix, ...args], {
				stdio: "ignore",
				env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
				timeout: 180_000,
			});
		try {
			console.error("  … installing wrk (Debian's package) for the bench's load");
			try {
				apt("install", "-y", "-qq", "wrk");
			} catch {
				apt("update", "-qq");
				apt("install", "-y", "-qq", "wrk");
			}
		} catch {}
		if (onPath()) return { ok: true };
	}
	return { ok: false, reason: "wrk is not installed and could not be (apt-get install wrk)" };
}

/** A Lua long string that holds `text` whatever it contains. */
function luaString(text) {
	let level = "";
	while (text.includes(`]${level}]`)) level += "=";
	return `[${level}[${text}]${level}]`;
}

/** The Lua script of one load: method, headers, and bodies sent in turn, each thread from its own offset. */
function script({ method, headers, body, bodies }) {
	const list = bodies ?? (body === undefined ? [] : [body]);
	const lines = [`wrk.method = ${luaString(method)}`];
	for (const [name, value] of Object.entries(headers)) {
		lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(String(value))}`);
	}
	if (list.length === 1) lines.push(`wrk.body = ${luaString(list[0])}`);
	if (list.length > 1) {
		lines.push(
			`local bodies = { ${list.map(luaString).join(",\n")} }`,
			"local threads = 0",
			"function setup(thread) thread:set('offset', threads * 7); threads = threads + 1 end",
			"local i = 0",
			"function init(args) i = offset or 0 end",
			"function request() i = i + 1; return wrk.format(nil, nil, nil, bodies[(i % #bodies) + 1]) end",
		);
	}
	return `${lines.join("\n")}\n`;
}

const UNITS = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
/** "82.49ms" → 82.49 (milliseconds). */
function millis(text) {
	const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text);
	if (!match) throw new Error(`wrk: unreadable duration ${text}`);
	return Number(match[1]) * UNITS[match[2]];
}

/** The figures of wrk's summary printed with `--latency`. */
export function parseWrk(output) {
	const requests = /(\d+) requests in ([\d.]+\w+),/.exec(output);
	const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
	const latency = /Latency\s+([\d.]+\w+)\s/.exec(output);
	if (!requests || !rps || !latency) throw new Error(`wrk: no summary in its output:\n${output}`);
	const percentile = (p) => {
		const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+\\w+)`, "m").exec(output);
		return match ? millis(match[1]) : Number.NaN;
	};
	const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
	const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
	return {
		total: Number(requests[1]),
		seconds: millis(requests[2]) / 1000,
		rps: Number(rps[1]),
		mean: millis(latency[1]),
		p50: percentile(50),
		p99: percentile(99),
		// Read errors are the connections wrk itself closes at the end of a run; the others are failures.
		socketErrors: socket ? Number(socket[1]) + Number(socket[3]) + Number(socket[4]) : 0,
		non2xx: non2xx ? Number(non2xx[1]) : 0,
	};
}

/**
 * One closed-loop load of `seconds` with wrk (2 threads and 64 connections by default, as issue 31 measured):
 * the same answer as autocannon's `load` (load.mjs), so `interleaved` can take either.
 */
export async function wrkLoad({
	url,
	method = "GET",
	headers = {},
	body,
	bodies,
	connections = 64,
	threads = 2,
	seconds = 10,
}) {
	const dir = mkdtempSync(join(tmpdir(), "amb-wrk-"));
	const path = join(dir, "load.lua");
	writeFileSync(path, script({ method, headers, body, bodies }));
	try {
		const args = ["-t", String(threads), "-c", String(connections), "-d", `${seconds}s`];
		const output = await new Promise((resolve, reject) => {
			const child = spawn("wrk", [...args, "--timeout", "10s", "--latency", "-s", path, url]);
			let text = "";
			let errors = "";
			child.stdout.on("data", (d) => {
				text += d;
			});
			child.stderr.on("data", (d) => {
				errors += d;
			});
			child.on("error", reject);
			// wrk reports an error of its script on stderr and goes on without it: that is a failed load too.
			child.on("close", (code) =>
				code === 0 && errors === ""
					? resolve(text)
					: reject(new Error(`wrk exited ${code}:\n${errors}${text}`)),
			);
		});
		const run = parseWrk(output);
		const failures = run.socketErrors + run.non2xx;
		if (failures > 0 && failures > run.total * 0.01) {
			throw new Error(`${method} ${url}: ${failures} of ${run.total} requests failed (wrk)\n${output}`);
		}
		return { ...run, failures };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
