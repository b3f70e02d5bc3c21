// `wrangler dev` for the SDK's live tests, started the way test/bench/worker.mjs starts it (loopback, a free port,
// migrations applied to fresh local state in a temp dir, its own process group), plus what these tests need: a
// kill -9 of the whole group and a restart on the same state and port.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	applyLocalMigrations,
	wranglerEnv as env,
	freePort,
	WRANGLER,
} from "../../../../test/support/local-worker.mjs";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

const running = new Set();
process.once("exit", () => {
	for (const child of running) {
		try {
			process.kill(-child.pid, "SIGKILL");
		} catch {}
	}
});

/** vars: extra Worker variables, e.g. { RATE_LIMIT_SDK_PER_MINUTE: "5" }. */
export async function startWorker(vars = {}) {
	const stateRoot = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
	const state = mkdtempSync(join(stateRoot, "amb-sdk-"));
	applyLocalMigrations(state);
	const port = await freePort();
	const adminKey = `sk_api_${randomBytes(24).toString("hex")}`;
	const allVars = {
		ADMIN_API_KEY: adminKey,
		RATE_LIMIT_SDK_PER_MINUTE: "1000000000",
		RATE_LIMIT_API_PER_MINUTE: "1000000000",
		ALLOW_LOCAL_WEBHOOK_URLS: "true",
		...vars,
	};
	const base = `http://127.0.0.1:${port}`;
	let child;
	let output = "";

	async function start() {
		const args = [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state];
		args.push("--log-level", "error", "--show-interactive-dev-session=false");
		for (const [name, value] of Object.entries(allVars)) args.push("--var", `${name}:${value}`);
		output = "";
		child = spawn(process.execPath, args, {
			env,
			cwd: ROOT,
			stdio: ["ignore", "pipe", "pipe"],
			detached: true,
		});
		running.add(child);
		child.stdout.on("data", (d) => {
			output += d;
		});
		child.stderr.on("data", (d) => {
			output += d;
		});
		const deadline = Date.now() + 90_000;
		while (Date.now() < deadline) {
			try {
				if ((await fetch(`${base}/healthz`)).ok) return;
			} catch {}
			if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
			await new Promise((r) => setTimeout(r, 200));
		}
		throw new Error(`wrangler dev did not start in 90 s:\n${output}`);
	}

	function killGroup(signal) {
		try {
			process.kill(-child.pid, signal);
		} catch {}
		running.delete(child);
	}

	async function waitExit() {
		if (child.exitCode === null && child.signalCode === null) {
			await new Promise((resolve) => child.once("exit", resolve));
		}
	}

	await start();
	return {
		base,
		adminKey,
		/** kill -9 of wrangler and workerd (the whole process group): no shutdown, no flush. */
		async crash() {
			killGroup("SIGKILL");
			await waitExit();
		},
		/** Starts again on the same state and port. */
		restart: start,
		async stop() {
			killGroup("SIGTERM");
			await Promise.race([waitExit(), new Promise((r) => setTimeout(r, 5000))]);
			killGroup("SIGKILL");
			rmSync(state, { recursive: true, force: true });
		},
		/** An admin call with the operator key. */
		async admin(method, path, body) {
			const response = await fetch(`${base}${path}`, {
				method,
				headers: { Authorization: `Bearer ${adminKey}`, "Content-Type": "application/json" },
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			const text = await response.text();
			if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
			return JSON.parse(text);
		},
		async sdkKey() {
			return (await this.admin("POST", "/v1/api-keys", { type: "sdk", name: "sdk live test" })).key;
		},
		/** {"action:llm_call": {count, value}, …} for one instance over the whole current month. */
		async usage(agentKey) {
			const report = await this.admin("GET", `/v1/usage?agent_key=${encodeURIComponent(agentKey)}`);
			return Object.fromEntries(report.usage.map((line) => [`${line.kind}:${line.type}`, line]));
		},
	};
}
