// What `wrangler check startup` measures and where it goes: a Worker built as `wrangler deploy` would upload it,
// its global scope run under the local runtime's profiler (as many times as asked), and the samples of each
// profile put to the module of the bundle they ran in. Used by startup.mjs for the startup rows of the bench.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { wranglerEnv as env, ROOT, WRANGLER } from "../support/local-worker.mjs";

function wrangler(args, cwd = ROOT) {
	const run = spawnSync(process.execPath, [WRANGLER, ...args], { env, cwd, encoding: "utf8" });
	if (run.status !== 0) throw new Error(`wrangler ${args.join(" ")} failed:\n${run.stderr}${run.stdout}`);
	return run.stdout;
}

/**
 * Builds the Worker of `config` (a wrangler.toml) as `wrangler deploy --dry-run` does: the upload (a multipart
 * body of every module and the metadata) and, with `metafile`, esbuild's account of the bundle's inputs.
 */
export async function buildWorker(config, outfile, metafile, extra = []) {
	wrangler([
		"deploy",
		"--dry-run",
		"--config",
		config,
		"--outfile",
		outfile,
		...(metafile ? ["--metafile", metafile] : []),
		...extra,
	]);
	const bytes = readFileSync(outfile);
	const boundary = bytes.subarray(2, bytes.indexOf(10)).toString().trim();
	const form = await new Response(bytes, {
		headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
	}).formData();
	const metadata = JSON.parse(form.get("metadata"));
	// The modules as wrangler counts them for its size limit: every part but the metadata and source maps.
	const modules = [...form.entries()].filter(
		([, part]) => part instanceof Blob && part.type !== "application/source-map",
	);
	const contents = Buffer.concat(
		await Promise.all(modules.map(async ([, part]) => Buffer.from(await part.arrayBuffer()))),
	);
	const main = await form.get(metadata.main_module).text();
	return {
		outfile,
		mainModule: metadata.main_module,
		main,
		modules: modules.map(([name, part]) => ({ name, bytes: part.size })),
		size: contents.byteLength,
		gzipSize: gzipSync(contents).byteLength,
	};
}

/**
 * Runs `wrangler check startup` on a built Worker; answers its CPU profile. wrangler gives up on a profile after
 * 10 seconds (starting its runtime included), which a busy machine can take: such a run is tried again, and after
 * `attempts` of them the answer is null.
 */
export function profileStartup(worker, profileFile, attempts = 4) {
	for (let attempt = 1; attempt <= attempts; attempt++) {
		try {
			wrangler(["check", "startup", "--worker", worker.outfile, "--outfile", profileFile]);
			return JSON.parse(readFileSync(profileFile, "utf8"));
		} catch (error) {
			if (!/timed out/.test(String(error))) throw error;
			console.error(`  … wrangler check startup timed out (${attempt} of ${attempts})`);
		}
	}
	return null;
}

/** Active CPU of a startup profile in ms, as wrangler sums it: every sample but the idle ones. */
export function activeMs(profile) {
	const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
	let active = 0;
	profile.samples.forEach((sample, i) => {
		if (!idle.has(sample)) active += profile.timeDeltas[i] ?? 0;
	});
	return active / 1000;
}

/**
 * What each module of the split build holds (scripts/build-worker.mjs): its file name → the packages or src/
 * folders that put most bytes in it (`zod`, `src/http + hono`), from esbuild's metafile.
 */
export function modulesToSources(metafilePath) {
	const meta = JSON.parse(readFileSync(metafilePath, "utf8"));
	const labels = new Map();
	for (const [path, output] of Object.entries(meta.outputs)) {
		const bytes = new Map();
		for (const [input, { bytesInOutput }] of Object.entries(output.inputs ?? {})) {
			const where = inputSource(input);
			bytes.set(where, (bytes.get(where) ?? 0) + bytesInOutput);
		}
		const top = [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 2);
		labels.set(path.slice(path.lastIndexOf("/") + 1), top.map(([where]) => where).join(" + ") || "(esbuild)");
	}
	return labels;
}

/** `node_modules/a/node_modules/@b/c/x.js` → `@b/c`; `src/http/gate.ts` → `src/http`. */
export function sourceOf(path) {
	if (path.startsWith("src/")) {
		const parts = path.split("/");
		return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
	}
	const inner = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length).split("/");
	return inner[0].startsWith("@") ? `${inner[0]}/${inner[1]}` : inner[0];
}

/**
 * Self time of the profiles by where it ran, in ms per profile, largest first: by module of the split build, named
 * by what it holds (modulesToSources). V8's own buckets keep their names ("(garbage collector)", "(program)":
 * parsing and compiling among them).
 */
export function contributors(profiles, metafilePath) {
	const labels = modulesToSources(metafilePath);
	const totals = new Map();
	for (const profile of profiles) {
		const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
		profile.samples.forEach((sample, i) => {
			const frame = nodes.get(sample)?.callFrame;
			if (!frame || frame.functionName === "(idle)") return;
			let where = frame.functionName;
			if (frame.url !== "") {
				const module = frame.url.slice(frame.url.lastIndexOf("/") + 1);
				where = labels.has(module) ? `${labels.get(module)} (${module})` : module;
			} else if (!where.startsWith("(")) where = `(runtime: ${where})`;
			totals.set(where, (totals.get(where) ?? 0) + (profile.timeDeltas[i] ?? 0));
		});
	}
	return [...totals]
		.map(([where, us]) => ({ where, ms: us / 1000 / profiles.length }))
		.sort((a, b) => b.ms - a.ms);
}

/** Bytes each package or src/ folder puts in the bundle, from esbuild's metafile; largest first. */
export function bundleInputs(metafilePath) {
	const meta = JSON.parse(readFileSync(metafilePath, "utf8"));
	const bytes = new Map();
	for (const output of Object.values(meta.outputs)) {
		for (const [path, input] of Object.entries(output.inputs ?? {})) {
			const where = inputSource(path);
			bytes.set(where, (bytes.get(where) ?? 0) + input.bytesInOutput);
		}
	}
	return Object.fromEntries([...bytes].sort((a, b) => b[1] - a[1]));
}

/** Where an input of the metafile comes from: a package, a folder of src/, or the path itself. */
const inputSource = (path) =>
	/(^|\/)(node_modules|src)\//.test(path) ? sourceOf(path.slice(path.search(/(node_modules|src)\//))) : path;

/**
 * The bytes of the modules the entry reaches by static imports: what the global scope parses and evaluates (a
 * module reached only by a dynamic import is parsed when that import runs). With the total, and the largest
 * packages among them.
 */
export function staticClosureBytes(metafilePath) {
	const meta = JSON.parse(readFileSync(metafilePath, "utf8"));
	const entry = Object.keys(meta.outputs).find((path) => meta.outputs[path].entryPoint === "src/index.ts");
	const seen = new Set([entry]);
	const pending = [entry];
	while (pending.length > 0) {
		for (const edge of meta.outputs[pending.pop()]?.imports ?? []) {
			if (edge.kind !== "import-statement" || edge.external || seen.has(edge.path)) continue;
			seen.add(edge.path);
			pending.push(edge.path);
		}
	}
	const bySource = new Map();
	let bytes = 0;
	let total = 0;
	for (const [path, output] of Object.entries(meta.outputs)) {
		if (path.endsWith(".map")) continue;
		total += output.bytes;
		if (!seen.has(path)) continue;
		bytes += output.bytes;
		for (const [input, { bytesInOutput }] of Object.entries(output.inputs ?? {})) {
			const source = inputSource(input);
			bySource.set(source, (bySource.get(source) ?? 0) + bytesInOutput);
		}
	}
	return {
		bytes,
		total,
		modules: seen.size,
		largest: [...bySource].sort((a, b) => b[1] - a[1]).slice(0, 5),
	};
}
