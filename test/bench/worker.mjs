// Starts the Worker under `wrangler dev` on loopback with fresh local state, and stops it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLocalMigrations, wranglerEnv as env, freePort, WRANGLER } from "../support/local-worker.mjs";

/**
 * `state`: the local state of an earlier start (stopped with `{ keepState: true }`), to start again on it: a fresh
 * runtime over the same data. Else a new state, migrated. `port`: a fixed port instead of a free one; `vars`: more
 * Worker variables (e.g. Stripe's, for the console's payment pages).
 */
export async function startWorker({ state: earlier, port: fixedPort, vars = {} } = {}) {
	// Local state on a RAM disk where there is one: the bench measures the Worker, not this machine's disk (on
	// Cloudflare, D1 and Durable Object storage are theirs).
	const stateRoot = process.env.BENCH_STATE_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
	const state = earlier ?? mkdtempSync(join(stateRoot, "amb-bench-"));
	if (!earlier) applyLocalMigrations(state);

	const port = fixedPort ?? (await freePort());
	const adminKey = `sk_api_${randomBytes(24).toString("hex")}`;
	const args = [
		WRANGLER,
		"dev",
		"--ip",
		"127.0.0.1",
		"--port",
		String(port),
		"--persist-to",
		state,
		"--log-level",
		process.env.BENCH_LOG_LEVEL ?? "error",
		"--show-interactive-dev-session=false",
		"--var",
		`ADMIN_API_KEY:${adminKey}`,
		// The limits are raised so that the load measures the service, not the 429 path; every request is
		// still counted by the rate limiter.
		"--var",
		"RATE_LIMIT_SDK_PER_MINUTE:1000000000",
		"--var",
		"RATE_LIMIT_API_PER_MINUTE:1000000000",
		// GET /healthz/hop, the one-hop ceiling (src/http/bench-routes.ts): only where this is set.
		"--var",
		"BENCH_ROUTES:1",
		// Local development's rule: webhooks may go to a receiver on loopback (the console's tests run one).
		"--var",
		"ALLOW_LOCAL_WEBHOOK_URLS:true",
		...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
	];
	const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
	// wrangler runs in its own process group; take it down with us however this process ends.
	const stopGroup = () => {
		try {
			process.kill(-child.pid, "SIGTERM");
		} catch {}
	};
	process.once("exit", stopGroup);
	for (const signal of ["SIGINT", "SIGTERM"]) {
		process.once(signal, () => {
			stopGroup();
			process.exit(1);
		});
	}
	let output = "";
	child.stdout.on("data", (d) => {
		output += d;
	});
	child.stderr.on("data", (d) => {
		output += d;
	});
	if (process.env.BENCH_LOG_LEVEL) {
		child.stdout.pipe(process.stderr);
		child.stderr.pipe(process.stderr);
	}

	const base = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 60_000;
	while (Date.now() < deadline) {
		try {
			const response = await fetch(`${base}/healthz`);
			if (response.ok) break;
		} catch {}
		if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
		await new Promise((r) => setTimeout(r, 250));
	}
	if (Date.now() >= deadline) throw new Error(`wrangler dev did not start in 60 s:\n${output}`);

	return {
		base,
		adminKey,
		state,
		pid: child.pid,
		how: `wrangler dev (local workerd, --log-level error, fresh --persist-to state in ${stateRoot})`,
		async stop({ keepState = false } = {}) {
			try {
				process.kill(-child.pid, "SIGTERM");
			} catch {}
			await new Promise((r) => setTimeout(r, 500));
			if (!keepState) rmSync(state, { recursive: true, force: true });
		},
	};
}
