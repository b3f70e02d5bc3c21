// The SDKs as a user gets them from a clone, against a real `wrangler dev`: the TypeScript SDK packed with
// `npm pack` and installed from the tarball into a scratch app, the Python SDK installed into fresh virtual
// environments (from its wheel, and from the directory). Each sends events that the API then counts.
// scripts/test-sdk-packages.sh packs and installs, then runs this file with node --test, passing
// SDK_PACKAGE_APP (the scratch app) and SDK_PACKAGE_PYTHONS (the environments' interpreters, ':'-separated).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../../sdk/typescript/test/live/worker.mjs";

const app = process.env.SDK_PACKAGE_APP;
const pythons = (process.env.SDK_PACKAGE_PYTHONS ?? "").split(":").filter(Boolean);
const unique = (name) => `${name}-${randomBytes(4).toString("hex")}`;

/** Runs a program the way a user would, and returns the JSON line it prints. */
function run(command, args, { cwd, agentKey, worker, sdkKey }) {
	const result = spawnSync(command, args, {
		cwd,
		encoding: "utf8",
		timeout: 60_000,
		env: { ...process.env, METERING_BASE_URL: worker.base, METERING_SDK_KEY: sdkKey, AGENT_KEY: agentKey },
	});
	assert.equal(result.status, 0, `${command} ${args.join(" ")} failed:\n${result.stderr}${result.stdout}`);
	const lines = result.stdout.trim().split("\n");
	return JSON.parse(lines[lines.length - 1]);
}

describe("the SDKs installed as packages", { concurrency: false }, () => {
	let worker;
	let sdkKey;
	before(async () => {
		assert.ok(app, "SDK_PACKAGE_APP names the scratch app (run scripts/test-sdk-packages.sh)");
		assert.ok(pythons.length > 0, "SDK_PACKAGE_PYTHONS names the virtual environments' interpreters");
		worker = await startWorker();
		sdkKey = await worker.sdkKey();
	});
	after(async () => {
		await worker?.stop();
	});

	it("TypeScript: the packed tarball, imported from ESM in a scratch app, sends events", async () => {
		const agentKey = unique("ts-package");
		const out = run(process.execPath, ["send.mjs"], { cwd: app, agentKey, worker, sdkKey });
		assert.deepEqual(out.failures, []);
		assert.equal(out.answer, "results for pricing");
		assert.equal(out.middleware, "function");
		// Without its optional peer, the LangChain entry says which package is missing.
		assert.match(out.langchain, /@langchain\/core/);
		// The typed client, with the same SDK key, reads back what was sent.
		assert.equal(out.status, 200);
		const counted = Object.fromEntries(out.usage.map((line) => [`${line.kind}:${line.type}`, line.count]));
		assert.deepEqual(counted, { "action:llm_call": 1, "action:tool_call": 1, "outcome:ticket_resolved": 1 });
		// And the API's own view, with the operator key.
		const usage = await worker.usage(agentKey);
		assert.equal(usage["action:llm_call"]?.count, 1);
		assert.equal(usage["outcome:ticket_resolved"]?.count, 1);
	});

	for (const python of pythons) {
		it(`Python: installed in ${python.split("/").slice(-3, -2)[0]}, sends events`, async () => {
			const agentKey = unique("py-package");
			const out = run(python, ["send.py"], { cwd: app, agentKey, worker, sdkKey });
			assert.deepEqual(out.failures, []);
			// Imported from the environment, not from the clone's source.
			assert.doesNotMatch(out.file, /sdk\/python\/agent_metering/);
			const usage = await worker.usage(agentKey);
			assert.equal(usage["action:llm_call"]?.count, 1);
			assert.equal(usage["outcome:ticket_resolved"]?.count, 1);
		});
	}
});
