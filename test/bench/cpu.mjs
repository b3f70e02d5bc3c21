// CPU time of the local service's processes, read from Linux's /proc, so that a route's cost can be given per
// request and per process. Under `wrangler dev` a request crosses wrangler's proxy runtime (one workerd) and the
// runtime that runs the Worker, its Durable Objects and the local D1 and R2 (another workerd, one thread); on this
// 2-core machine that thread is what saturates first, so the ratios of the bench follow its CPU per request.
import { readdirSync, readFileSync } from "node:fs";

// Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every common configuration.
const TICK_MICROSECONDS = 10_000;

function stat(pid) {
	try {
		const text = readFileSync(`/proc/${pid}/stat`, "utf8");
		const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
		return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
	} catch {
		return null;
	}
}

/** What each process under `rootPid` is: the Worker's runtime, wrangler's proxy runtime, or wrangler itself. */
function roleOf(pid) {
	const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
	if (!command.includes("workerd")) return "wrangler";
	// Miniflare starts the runtime of the Worker with an inspector and a debug port; wrangler's proxy has neither.
	return command.includes("--debug-port") ? "worker runtime" : "proxy runtime";
}

/** CPU microseconds used so far by each role of the processes descending from `rootPid`; null off Linux. */
export function serviceCpu(rootPid) {
	let pids;
	try {
		pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
	} catch {
		return null;
	}
	const parents = new Map();
	for (const pid of pids) {
		const s = stat(pid);
		if (s !== null) parents.set(Number(pid), s);
	}
	const descends = (pid) => {
		for (let p = pid, hops = 0; p > 1 && hops < 10; p = parents.get(p)?.ppid ?? 0, hops++) {
			if (p === rootPid) return true;
		}
		return false;
	};
	const used = {};
	for (const [pid, s] of parents) {
		if (!descends(pid)) continue;
		try {
			const role = roleOf(pid);
			used[role] = (used[role] ?? 0) + s.ticks * TICK_MICROSECONDS;
		} catch {}
	}
	return used;
}
