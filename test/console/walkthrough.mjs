// The first minutes outside the console. `npm run dev` (scripts/dev.mjs) prints the operator key after wrangler's
// start-up lines, with nothing alarming (this machine has no internet, so it is checked offline). Then the README's
// "A walk through the API", run as a reader would paste it, twice in a row, against the Worker under `wrangler dev`
// (fresh local state, loopback only): every curl of the block fails the run on an HTTP error (--fail-with-body) and
// bash stops at the first failure (set -euo pipefail). Its webhook step starts scripts/webhook-receiver.mjs on a
// free port, and the test delivery must reach it with valid signatures. Run with `npm run test:walkthrough`.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { startWorker } from "../bench/worker.mjs";

const hardStop = setTimeout(() => {
	console.error("walk-through: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

/** The shell block under "## A walk through the API" in the README, exactly as printed there. */
function walkThroughBlock(readme) {
	const section = readme.slice(readme.indexOf("## A walk through the API"));
	const match = /```sh\n([\s\S]*?)```/.exec(section);
	if (!match) throw new Error("no ```sh block under '## A walk through the API'");
	return match[1];
}

let worker;
const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url));
const block = walkThroughBlock(readFileSync(new URL("../../README.md", import.meta.url), "utf8"));

before(async () => {
	worker = await startWorker();
});

after(async () => {
	await worker?.stop();
	clearTimeout(hardStop);
});

/**
 * Runs the block from the repository's root with the README's API and KEY lines pointed at this Worker and its
 * HOOKS line at a free port for the webhook receiver; prints what it made at the end.
 */
function runBlock(hooksPort) {
	const script = block
		.replace(/^API=.*$/m, `API=${worker.base}`)
		.replace(/^KEY=.*$/m, `KEY=${worker.adminKey}`)
		.replace(/^HOOKS=.*$/m, `HOOKS=${hooksPort}`);
	const wrapped = [
		"set -euo pipefail",
		// A step that fails must not leave the webhook receiver running (bash's output would stay open).
		"trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
		// Every HTTP error is a failure of the walk-through, with the API's answer in the output.
		'curl() { command curl --fail-with-body --max-time 30 "$@"; }',
		script,
		'echo; echo "WALKTHROUGH sub=$SUB invoice=$INVOICE webhook=$WEBHOOK secret=$WEBHOOK_SECRET"',
	].join("\n");
	return spawnSync("bash", ["-c", wrapped], { encoding: "utf8", timeout: 90_000, cwd: repositoryRoot });
}

function freePort() {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.on("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

describe("npm run dev", { timeout: 100_000 }, () => {
	it("prints the operator key in a box after wrangler's start-up lines, offline, with nothing alarming", async () => {
		const state = mkdtempSync(join(tmpdir(), "amb-dev-"));
		// npm run dev makes .dev.vars when there is none; one made here is removed again afterwards, so that the
		// suites after this one (whose Worker would read it) run as before.
		const hadDevVars = existsSync(".dev.vars");
		const port = await freePort();
		const child = spawn(
			process.execPath,
			["scripts/dev.mjs", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state],
			{ stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, CI: "" } },
		);
		let output = "";
		child.stdout.on("data", (d) => {
			output += d;
		});
		child.stderr.on("data", (d) => {
			output += d;
		});
		try {
			const deadline = Date.now() + 80_000;
			while (!/└─+┘[\s\S]*Crons by hand/.test(output) && Date.now() < deadline && child.exitCode === null) {
				await new Promise((r) => setTimeout(r, 250));
			}
			const key = /^ADMIN_API_KEY\s*=\s*"?([^"\n]+)"?/m.exec(readFileSync(".dev.vars", "utf8"))?.[1];
			assert.match(key ?? "", /^sk_api_[A-Za-z0-9]{40}$/);
			const plain = stripVTControlCharacters(output);
			const ready = plain.indexOf("Ready on");
			const box = plain.indexOf(`│   ${key}`);
			assert.ok(ready >= 0, `wrangler never said it was ready:\n${plain}`);
			assert.ok(box > ready, `the key is not printed after "Ready on":\n${plain}`);
			// The key box is the last thing on screen: nothing of wrangler's after it but blank lines.
			assert.match(plain.slice(box), /^[\s\S]*└─+┘\n\nTry: [^\n]*\nCrons by hand: [^\n]*\n\s*$/);
			for (const alarming of [/error/i, /✘/, /ENOTFOUND/, /WARNING/, /Unable to fetch/]) {
				assert.doesNotMatch(plain, alarming, `npm run dev printed ${alarming}:\n${plain}`);
			}
			const base = `http://127.0.0.1:${port}`;
			assert.equal((await fetch(`${base}/healthz`)).status, 200);
			const agents = await fetch(`${base}/v1/agents`, { headers: { Authorization: `Bearer ${key}` } });
			assert.equal(agents.status, 200);
			// The crons run by hand, as the box says.
			const cron = await fetch(`${base}/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
			assert.equal(cron.status, 200);
		} finally {
			try {
				process.kill(-child.pid, "SIGTERM");
			} catch {}
			await new Promise((r) => setTimeout(r, 500));
			rmSync(state, { recursive: true, force: true });
			if (!hadDevVars) rmSync(".dev.vars", { force: true });
		}
	});
});

describe("the README walk-through", { timeout: 220_000 }, () => {
	const runs = [];
	for (const n of [1, 2]) {
		it(`runs without an error (run ${n})`, { timeout: 100_000 }, async () => {
			const result = runBlock(await freePort());
			assert.equal(result.status, 0, `exit ${result.status}\n${result.stdout}\n${result.stderr}`);
			const summary = /^WALKTHROUGH (.*)$/m.exec(result.stdout)?.[1] ?? "";
			const made = Object.fromEntries(
				summary
					.split(" ")
					.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
			);
			assert.match(made.sub ?? "", /^sub_/);
			assert.match(made.invoice ?? "", /^inv_/);
			assert.match(made.webhook ?? "", /^whk_|^wh_/);
			// The webhook step keeps the signing secret a receiver needs.
			assert.match(made.secret ?? "", /^whsec_[A-Za-z0-9+/]{43}=$/);
			// The simulation's figure the README states.
			assert.match(result.stdout, /"total":313\.77/);
			// The test delivery reached the receiver, which found both signatures valid.
			assert.match(result.stdout, /"delivered":true/);
			assert.match(result.stdout, /^verified invoice\.paid evt_\S+ \(test\) on \/hooks: \{/m);
			assert.doesNotMatch(result.stdout, /^rejected /m);
			runs.push(made);
		});
	}
	it("made new things on the second run, not the first run's again", () => {
		assert.equal(runs.length, 2);
		assert.notEqual(runs[0].sub, runs[1].sub);
		assert.notEqual(runs[0].invoice, runs[1].invoice);
	});
});
