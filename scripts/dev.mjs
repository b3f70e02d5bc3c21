// `npm run dev`: apply local D1 migrations, make sure .dev.vars holds an operator key, start `wrangler dev`, and
// once it is ready print the key in a box under wrangler's start-up lines, where it is seen.
// Extra arguments go to `wrangler dev` (e.g. `npm run dev -- --port 8788`); `--persist-to DIR` is used for the
// migrations too.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";

// Offline and quiet: no usage metrics, and no fetch of Cloudflare's `Request.cf` sample (offline it fails with a
// stack trace; the local placeholder serves this Worker, which does not read request.cf).
const env = {
	WRANGLER_SEND_METRICS: "false",
	CLOUDFLARE_CF_FETCH_ENABLED: "false",
	...process.env,
};
const wrangler = ["node_modules/wrangler/bin/wrangler.js"];
const args = process.argv.slice(2);

function operatorKey() {
	const existing = existsSync(".dev.vars") ? readFileSync(".dev.vars", "utf8") : "";
	const match = /^ADMIN_API_KEY\s*=\s*"?([^"\n]+)"?/m.exec(existing);
	if (match) return { key: match[1], created: false };
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const key = `sk_api_${Array.from(randomBytes(40), (b) => alphabet[b % 62]).join("")}`;
	const separator = existing && !existing.endsWith("\n") ? "\n" : "";
	writeFileSync(".dev.vars", `${existing}${separator}ADMIN_API_KEY="${key}"\n`);
	return { key, created: true };
}

/** The key and where to go, framed so that it stands out among wrangler's lines. */
export function keyBox(key, base, created) {
	const lines = [
		`Agent Metering & Billing is running at ${base}`,
		"",
		`Operator (admin) API key${created ? ", new in .dev.vars" : ", from .dev.vars"}:`,
		`  ${key}`,
		"",
		`Console:        ${base}/console   (paste the key)`,
		`API reference:  ${base}/docs`,
	];
	const width = Math.max(...lines.map((line) => line.length));
	const bar = "─".repeat(width + 2);
	const box = [`┌${bar}┐`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `└${bar}┘`];
	return [
		...box,
		"",
		`Try:            curl -H "Authorization: Bearer ${key}" ${base}/v1/agents`,
		`Crons by hand:  curl "${base}/__scheduled?cron=*/5+*+*+*+*"   (they do not run by themselves locally)`,
	].join("\n");
}

const { key, created } = operatorKey();
const persistAt = args.indexOf("--persist-to");
const persist = persistAt >= 0 && args[persistAt + 1] ? ["--persist-to", args[persistAt + 1]] : [];
const migrate = spawnSync(
	process.execPath,
	[...wrangler, "d1", "migrations", "apply", "DB", "--local", ...persist],
	{ stdio: ["ignore", "pipe", "pipe"], env: { ...env, CI: "true" }, encoding: "utf8" },
);
if (migrate.status !== 0) {
	process.stdout.write(migrate.stdout);
	process.stderr.write(migrate.stderr);
	process.exit(migrate.status ?? 1);
}
const applied = /No migrations to apply/.test(migrate.stdout) ? "up to date" : "applied";
console.log(`Local D1 migrations: ${applied}.`);

// --test-scheduled: the crons can be run by hand at /__scheduled (wrangler would otherwise warn that they do not
// run by themselves in local development). --bundle: wrangler adds that route (and its local error pages) only to a
// Worker it bundles; wrangler.toml's no_bundle is for the upload, and the split modules stay separate either way.
// ALLOW_LOCAL_WEBHOOK_URLS: webhooks may go to a receiver on this machine (localhost, 127.0.0.1, [::1]), which a
// deployment refuses.
const devArgs = [
	...args,
	...(args.includes("--test-scheduled") ? [] : ["--test-scheduled"]),
	...(args.some((arg) => /^--(no-)?bundle$/.test(arg)) ? [] : ["--bundle"]),
	"--var",
	"ALLOW_LOCAL_WEBHOOK_URLS:true",
];
const dev = spawn(process.execPath, [...wrangler, "dev", ...devArgs], {
	stdio: ["inherit", "pipe", "pipe"],
	env,
});
// wrangler prints "Ready on http://localhost:8787", then may print its bindings again: the box waits until its
// output has been quiet for a moment, so that it ends up last, where it is seen.
let base = null;
let shown = false;
let timer = null;
const showKey = () => {
	if (shown || !base) return;
	shown = true;
	process.stdout.write(`\n${keyBox(key, base, created)}\n\n`);
};
let seen = "";
const watch = (chunk, out) => {
	out.write(chunk);
	if (shown) return;
	if (!base) {
		seen = (seen + stripVTControlCharacters(chunk.toString())).slice(-4000);
		base = /Ready on (https?:\/\/\S+)/.exec(seen)?.[1] ?? null;
		// However busy wrangler stays, the box comes within 8 s of "Ready".
		if (base) setTimeout(showKey, 8000);
	}
	if (base) {
		clearTimeout(timer);
		timer = setTimeout(showKey, 1500);
	}
};
dev.stdout.on("data", (chunk) => watch(chunk, process.stdout));
dev.stderr.on("data", (chunk) => watch(chunk, process.stderr));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
