// A Worker under `wrangler dev` that can be killed like a crashed machine (SIGKILL to its whole process group:
// wrangler and workerd die at once, nothing is flushed) and started again on the same local state.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { applyLocalMigrations, wranglerEnv as env, freePort, WRANGLER } from "../support/local-worker.mjs";

export { inParallel } from "../bench/api.mjs";

/** Fresh local state with the migrations applied, and the operator key every start of it uses. */
export function newState() {
	const dir = mkdtempSync(join(tmpdir(), "amb-crash-"));
	applyLocalMigrations(dir);
	return {
		dir,
		adminKey: `sk_api_${randomBytes(24).toString("hex")}`,
		remove: () => rmSync(dir, { recursive: true, force: true }),
	};
}

/** Starts `wrangler dev` on `state`; resolves when /healthz answers. */
export async function startWorker(state) {
	const port = await freePort();
	const args = [
		WRANGLER,
		"dev",
		"--ip",
		"127.0.0.1",
		"--port",
		String(port),
		"--persist-to",
		state.dir,
		"--log-level",
		process.env.CRASH_LOG_LEVEL ?? "error",
		"--show-interactive-dev-session=false",
		"--var",
		`ADMIN_API_KEY:${state.adminKey}`,
		"--var",
		"RATE_LIMIT_SDK_PER_MINUTE:1000000000",
		"--var",
		"RATE_LIMIT_API_PER_MINUTE:1000000000",
		// Local development's rule: webhooks may go to a receiver on loopback.
		"--var",
		"ALLOW_LOCAL_WEBHOOK_URLS:true",
	];
	const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
	const killGroup = (signal) => {
		try {
			process.kill(-child.pid, signal);
		} catch {}
	};
	process.once("exit", () => killGroup("SIGKILL"));
	let output = "";
	child.stdout.on("data", (d) => {
		output += d;
	});
	child.stderr.on("data", (d) => {
		output += d;
	});
	const exited = new Promise((resolve) => child.once("exit", resolve));

	const base = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 90_000;
	for (;;) {
		try {
			if ((await fetch(`${base}/healthz`)).ok) break;
		} catch {}
		if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
		if (Date.now() > deadline) {
			killGroup("SIGKILL");
			throw new Error(`wrangler dev did not start in 90 s:\n${output}`);
		}
		await new Promise((r) => setTimeout(r, 250));
	}
	return {
		base,
		/** kill -9 of wrangler and workerd together, as a crash would. */
		async crash() {
			killGroup("SIGKILL");
			await exited;
		},
		async stop() {
			killGroup("SIGTERM");
			await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
			killGroup("SIGKILL");
		},
	};
}

/** A JSON client that returns status, headers and body instead of throwing. */
export function client(base, key) {
	return async (method, path, body, headers = {}) => {
		const response = await fetch(`${base}${path}`, {
			method,
			headers: {
				Authorization: `Bearer ${key}`,
				...(body === undefined ? {} : { "Content-Type": "application/json" }),
				...headers,
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
	};
}

/**
 * Counts rows of a D1 table straight from the local SQLite file, read-only: a view from outside the Worker, so it
 * can watch a request's progress without queueing behind it.
 */
export function peekCount(state, table) {
	return peek(state, `SELECT count(*) AS n FROM "${table}"`)[0]?.n ?? 0;
}

/** Rows of a read-only query on the local D1 file (see peekCount). */
export function peek(state, sql) {
	const dir = join(state.dir, "v3", "d1", "miniflare-D1DatabaseObject");
	const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
	const db = new DatabaseSync(join(dir, file), { readOnly: true });
	try {
		return db.prepare(sql).all();
	} catch {
		return [];
	} finally {
		db.close();
	}
}
