// The README's "A walk through the API", run as a reader would paste it, twice in a row, against the Worker
// under `wrangler dev` (fresh local state, loopback only). Every curl of the block fails the run on an HTTP error
// (--fail-with-body) and bash stops at the first failure (set -euo pipefail). Run with `npm run test:walkthrough`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
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
const block = walkThroughBlock(readFileSync(new URL("../../README.md", import.meta.url), "utf8"));

before(async () => {
	worker = await startWorker();
});

after(async () => {
	await worker?.stop();
	clearTimeout(hardStop);
});

/** Runs the block with the README's API and KEY lines pointed at this Worker; prints what it made at the end. */
function runBlock() {
	const script = block
		.replace(/^API=.*$/m, `API=${worker.base}`)
		.replace(/^KEY=.*$/m, `KEY=${worker.adminKey}`);
	const wrapped = [
		"set -euo pipefail",
		// Every HTTP error is a failure of the walk-through, with the API's answer in the output.
		'curl() { command curl --fail-with-body --max-time 30 "$@"; }',
		script,
		'echo; echo "WALKTHROUGH sub=$SUB invoice=$INVOICE webhook=$WEBHOOK secret=$WEBHOOK_SECRET"',
	].join("\n");
	return spawnSync("bash", ["-c", wrapped], { encoding: "utf8", timeout: 90_000 });
}

describe("the README walk-through", { timeout: 220_000 }, () => {
	const runs = [];
	for (const n of [1, 2]) {
		it(`runs without an error (run ${n})`, { timeout: 100_000 }, () => {
			const result = runBlock();
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
			runs.push(made);
		});
	}
	it("made new things on the second run, not the first run's again", () => {
		assert.equal(runs.length, 2);
		assert.notEqual(runs[0].sub, runs[1].sub);
		assert.notEqual(runs[0].invoice, runs[1].invoice);
	});
});
