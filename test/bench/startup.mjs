// The startup rows of the bench (`npm run bench -- --only startup`; issue 42, docs/scaling.md#cold-start):
// - the global scope's CPU under `wrangler check startup`, this Worker and a bare Hono Worker with the same wrangler
//   and compatibility settings (generated here), profiled in turns, median of 5 (2 with --quick);
// - where that time goes: the profiles' self time by package or src/ folder;
// - the bundle as uploaded, raw and gzip, against a budget of 1.5 MB gzip: over it, the bench fails naming the
//   largest packages and how much each grew since bundle-baseline.json (esbuild's metafile, as wrangler built it);
// - the first POST /v1/actions of a freshly started `wrangler dev` against the tenth.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { METAFILE } from "../../scripts/build-worker.mjs";
import { ROOT } from "../support/local-worker.mjs";
import { apiClient } from "./api.mjs";
import { provisionEnvironment } from "./scenarios.mjs";
import {
	activeMs,
	buildWorker,
	bundleInputs,
	contributors,
	profileStartup,
	staticClosureBytes,
} from "./startup-profile.mjs";
import { startWorker } from "./worker.mjs";

const BUDGET_GZIP_BYTES = 1.5 * 1000 * 1000;
const TARGET_MS = 25;
const BASELINE = new URL("./bundle-baseline.json", import.meta.url);
const WORK = join(ROOT, ".wrangler", "bench-startup");

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;
const kb = (bytes) => `${(bytes / 1e3).toFixed(0)} KB`;
const median = (values) => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** A Worker of Hono alone, with this project's compatibility date and flags, for the same wrangler to build. */
function bareHonoWorker() {
	const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
	const setting = (name) => new RegExp(`^${name}\\s*=.*$`, "m").exec(config)?.[0] ?? "";
	const dir = join(WORK, "bare-hono");
	mkdirSync(dir, { recursive: true });
	writeFileSync(
		join(dir, "index.js"),
		'import { Hono } from "hono";\n\nconst app = new Hono();\napp.get("/", (c) => c.text("ok"));\n\nexport default app;\n',
	);
	writeFileSync(
		join(dir, "wrangler.toml"),
		[
			'name = "bare-hono"',
			'main = "index.js"',
			setting("compatibility_date"),
			setting("compatibility_flags"),
			"",
		].join("\n"),
	);
	return join(dir, "wrangler.toml");
}

/** The budget's verdict, and when over it, which packages are largest and how much each grew since the baseline. */
function budgetReport(worker, inputs) {
	const baseline = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, "utf8")) : {};
	const lines = Object.entries(inputs)
		.slice(0, 10)
		.map(([name, bytes]) => {
			const before = baseline.inputs?.[name];
			const grew = before === undefined ? "new" : `${bytes >= before ? "+" : ""}${kb(bytes - before)}`;
			return `${name} ${kb(bytes)} (${grew} since ${baseline.measured ?? "the baseline"})`;
		});
	const dataModules = worker.modules.filter((m) => !m.name.endsWith(".mjs"));
	if (dataModules.length > 0) {
		lines.push(
			`data modules: ${dataModules.map((m) => `${m.name.replace(/^\.\/[0-9a-f]+-/, "")} ${kb(m.bytes)}`).join(", ")}`,
		);
	}
	return lines;
}

/** Writes the per-package bytes of this build as the baseline the budget's report compares with. */
export function recordBaseline(inputs) {
	writeFileSync(
		BASELINE,
		`${JSON.stringify({ measured: new Date().toISOString().slice(0, 10), inputs }, null, "\t")}\n`,
	);
}

export async function startupRows({ quick, row, fmt }) {
	const runs = quick ? 2 : 5;
	mkdirSync(WORK, { recursive: true });
	const load = loadavg()[0];
	// wrangler's [build] runs scripts/build-worker.mjs, which writes the metafile (wrangler does not bundle).
	const worker = await buildWorker(join(ROOT, "wrangler.toml"), join(WORK, "worker.bundle"));
	const bare = await buildWorker(bareHonoWorker(), join(WORK, "bare-hono.bundle"));

	// In turns, so that both see the same share of whatever else the machine is doing.
	const ours = [];
	const theirs = [];
	const profiles = [];
	for (let i = 0; i < runs; i++) {
		const profile = profileStartup(worker, join(WORK, `worker-${i}.cpuprofile`));
		const baseline = profile && profileStartup(bare, join(WORK, `bare-hono-${i}.cpuprofile`));
		if (!profile || !baseline) continue;
		profiles.push(profile);
		ours.push(activeMs(profile));
		theirs.push(activeMs(baseline));
		console.error(
			`  … startup ${i + 1}/${runs}: ${fmt(ours.at(-1), 1)} ms vs bare Hono ${fmt(theirs.at(-1), 1)} ms`,
		);
	}
	if (profiles.length === 0) {
		row(
			"startup CPU, wrangler check startup",
			"n/a: every profile timed out (wrangler allows 10 s; the machine is busy)",
			`≤ ${TARGET_MS} ms`,
		);
	} else {
		const ourMedian = median(ours);
		const bareMedian = median(theirs);
		row(
			`startup CPU, wrangler check startup (active, median of ${ours.length}): this Worker vs a bare Hono Worker`,
			`${fmt(ourMedian, 1)} ms vs ${fmt(bareMedian, 1)} ms (runs ${ours.map((v) => fmt(v, 0)).join(", ")} vs ${theirs.map((v) => fmt(v, 0)).join(", ")} ms; load average ${fmt(load, 1)} → ${fmt(loadavg()[0], 1)})`,
			`≤ ${TARGET_MS} ms`,
			ourMedian <= TARGET_MS,
		);
		const top = contributors(profiles, METAFILE).slice(0, 8);
		row(
			"startup profile, top contributors (self time per start)",
			top.map(({ where, ms }) => `${where} ${fmt(ms, 1)}`).join("; "),
			"",
		);
	}

	const inputs = bundleInputs(METAFILE);
	const startup = staticClosureBytes(METAFILE);
	row(
		"code the global scope parses (modules src/index.ts's build imports statically, esbuild's metafile)",
		`${kb(startup.bytes)} in ${startup.modules} modules of ${kb(startup.total)} built; largest ${startup.largest.map(([name, bytes]) => `${name} ${kb(bytes)}`).join(", ")}`,
		"",
	);
	const over = worker.gzipSize > BUDGET_GZIP_BYTES;
	row(
		`bundle as uploaded (${worker.modules.length} modules)`,
		`${mb(worker.size)}, gzip ${mb(worker.gzipSize)} (bare Hono: gzip ${kb(bare.gzipSize)})`,
		`gzip ≤ ${mb(BUDGET_GZIP_BYTES)}`,
		!over,
	);
	const report = budgetReport(worker, inputs);
	if (over) {
		console.error(
			`\n!! The bundle is over its budget: gzip ${mb(worker.gzipSize)} > ${mb(BUDGET_GZIP_BYTES)}. Largest inputs:\n   ${report.join("\n   ")}\n`,
		);
		process.exitCode = 1;
	} else console.error(`  bundle inputs: ${report.slice(0, 5).join("; ")}`);
	if (process.argv.includes("--record-bundle-baseline")) recordBaseline(inputs);

	await firstRequestRow({ row, fmt });
}

/**
 * The first POST /v1/actions of a freshly started `wrangler dev` (its runtime, isolate and objects new) against the
 * tenth: the data is provisioned by one run of the Worker, which is stopped; a second one is started on the same
 * local state, asked GET /healthz until it answers (the ingest app; nothing else is loaded), then sent the events.
 */
async function firstRequestRow({ row, fmt }) {
	const setup = await startWorker();
	let env;
	try {
		env = await provisionEnvironment(setup.base, setup.adminKey, "live", 1);
	} finally {
		await setup.stop({ keepState: true });
	}
	const fresh = await startWorker({ state: setup.state });
	try {
		const sdk = apiClient(fresh.base, env.sdkKey);
		const times = [];
		for (let i = 0; i < 10; i++) {
			const started = performance.now();
			await sdk("POST", "/v1/actions", { agent_key: env.instanceKeys[0], action_type: "llm_call" });
			times.push(performance.now() - started);
		}
		row(
			"first POST /v1/actions on a freshly started wrangler dev vs the tenth",
			`${fmt(times[0], 1)} ms vs ${fmt(times[9], 1)} ms (2nd–10th: ${times
				.slice(1)
				.map((t) => fmt(t, 0))
				.join(", ")} ms)`,
			"",
		);
	} finally {
		await fresh.stop();
	}
}
