// What every harness that runs the Worker under `wrangler dev` needs (the bench, the crash tests, the SDKs' live
// tests): a free loopback port, and fresh local state with the D1 migrations applied.
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const WRANGLER = fileURLToPath(
	new URL("../../node_modules/wrangler/bin/wrangler.js", import.meta.url),
);
/** wrangler without its network calls: these machines have no internet, and CI must not wait on it. */
export const wranglerEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

export function freePort() {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.unref();
		server.on("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

/** Applies the local D1 migrations to the state in `dir` (as `wrangler dev --persist-to dir` will read it). */
export function applyLocalMigrations(dir) {
	const migrate = spawnSync(
		process.execPath,
		[WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir],
		{ env: wranglerEnv, encoding: "utf8", cwd: ROOT },
	);
	if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stderr}${migrate.stdout}`);
}
