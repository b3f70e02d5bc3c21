// `npm run bench [-- --quick] [-- --only ingest,batch]`: starts the Worker locally with fresh state, measures,
// prints one table. `--only` runs some scenarios: ceiling (the bare route by both load generators, and the
// one-hop route), ingest (which measures the ceiling too), batch, priced, costed (LLM calls costed from the model
// prices), hot, latency, gate, invoicing (which also measures bytes per event and the reports), documents (the
// cost of an invoice PDF), reservations (a budget reservation's latency against an entitlement check's), startup
// (a new isolate's startup CPU beside a bare Hono Worker's, the bundle against its budget, and the first request
// of a fresh `wrangler dev`: startup.mjs; it starts its own Workers, so `--only startup` starts no other).
// Throughput figures are ratios against bare routes measured in the same run, loaded by wrk (wrk.mjs):
// absolute numbers on a shared 2-core machine behind wrangler's proxy mean little.
import { setTimeout as sleep } from "node:timers/promises";
import { apiClient, inParallel, timed } from "./api.mjs";
import { serviceCpu } from "./cpu.mjs";
import { interleaved, paced, settle } from "./load.mjs";
import {
	COSTED_CALL,
	FILTERED_PLAN,
	inParallelAlerts,
	provisionEnvironment,
	provisionHotSubscription,
	sendUsage,
	UNCOSTED_CALL,
} from "./scenarios.mjs";
import { startupRows } from "./startup.mjs";
import { storeBytes } from "./storage.mjs";
import { startWorker } from "./worker.mjs";
import { ensureWrk, wrkLoad } from "./wrk.mjs";

const quick = process.argv.includes("--quick");
const SCENARIOS = [
	"ceiling",
	"ingest",
	"batch",
	"priced",
	"costed",
	"hot",
	"latency",
	"gate",
	"invoicing",
	"documents",
	"reservations",
	"startup",
];
const onlyAt = process.argv.findIndex((arg) => arg === "--only" || arg.startsWith("--only="));
const only =
	onlyAt === -1
		? null
		: new Set(
				(process.argv[onlyAt].startsWith("--only=")
					? process.argv[onlyAt].slice("--only=".length)
					: (process.argv[onlyAt + 1] ?? "")
				).split(","),
			);
for (const name of only ?? []) {
	if (!SCENARIOS.includes(name))
		throw new Error(`--only: unknown scenario ${name} (${SCENARIOS.join(", ")})`);
}
// The priced scenario is a ratio to the plain figures, so it measures them too (the ingest and batch rows).
// Ingest is a ratio to the ceiling, so it measures that too.
const runs = (name) =>
	only === null ||
	only.has(name) ||
	((name === "batch" || name === "ingest") && only.has("priced")) ||
	(name === "ceiling" && runs("ingest"));
// Shards of the sharded hot subscription: 16 × ~1,000 requests/s per accumulator in production.
const HOT_SHARDS = 16;
const size = quick
	? {
			seconds: 2,
			// The rounds of the wrk ratios (ceiling, ingest, hot): a load of 64 connections counts what answered
			// within its time, so a short one undercounts the slower route by its latency (wrk has no warm-up).
			ceilingSeconds: 4,
			rounds: 2,
			latencySeconds: 3,
			batches: 4,
			roundBatches: 4,
			subscriptions: 50,
			bigEvents: 20_000,
			reportSeconds: 1,
			settleMs: 4_000,
			pdfs: 5,
		}
	: {
			seconds: 12,
			ceilingSeconds: 20,
			rounds: 4,
			latencySeconds: 10,
			batches: 20,
			roundBatches: 100,
			subscriptions: 1000,
			bigEvents: 1_000_000,
			reportSeconds: 5,
			settleMs: 5_000,
			pdfs: 20,
		};

const rows = [];
function row(figure, measured, target, pass) {
	rows.push({ figure, measured, target, status: pass === undefined ? "" : pass ? "met" : "missed" });
	console.error(`  ${figure}: ${measured}`);
}
const fmt = (n, digits = 2) => (Number.isFinite(n) ? Number(n).toFixed(digits) : "n/a");

/**
 * One hot subscription: single events of its 64 instances from 64 connections (against the bare route in the
 * same rounds), then 1,000-event batches of its instances. Every event lands in the one subscription, counted by
 * `shards` accumulators (issue #14: each takes ~1,000 requests/s in production).
 */
async function hotSubscriptionRows(base, adminKey, shards) {
	const hot = await provisionHotSubscription(base, adminKey, 64, shards);
	const hotHeaders = { Authorization: `Bearer ${hot.sdkKey}`, "Content-Type": "application/json" };
	const hotBodies = hot.instanceKeys.map((agentKey) =>
		JSON.stringify({ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 10 } }),
	);
	await apiClient(base, hot.sdkKey)("POST", "/v1/actions", JSON.parse(hotBodies[0]));
	const [hotBare, hotSingles] = await interleaved(
		[
			{ url: `${base}/healthz`, generator },
			{ url: `${base}/v1/actions`, method: "POST", headers: hotHeaders, bodies: hotBodies, generator },
		],
		{ rounds: size.rounds, seconds: size.ceilingSeconds },
	);
	const label = shards === 1 ? "one accumulator" : `${shards} shards`;
	row(
		`one hot subscription, ${label}, single events (64 instances, 64 connections)`,
		`${fmt(hotSingles.rps, 0)} events/s (${fmt(hotSingles.rps / hotBare.rps)} of /healthz)`,
		shards === 1 ? "~1,000 events/s in production (one object)" : "≥ 10,000 events/s in production",
	);
	const hotBatches = await timed(() => sendUsage(base, hot.sdkKey, hot.instanceKeys, size.batches * 1000, 4));
	row(
		`one hot subscription, ${label}, 1,000-event batches`,
		`${fmt(hotBatches.value / hotBatches.seconds, 0)} events/s`,
		"≥ 10,000 events/s in production",
	);
}

/**
 * LLM calls costed at ingest from the model prices (model + token counts in metadata): single events against the
 * same events without a model, in alternating rounds over the same 64 subscriptions, then 1,000-event batches of
 * costed calls. What costing adds is a price lookup and exact arithmetic per event and a model_costs row per call.
 */
async function costedRows(base, adminKey) {
	const costed = await provisionEnvironment(base, adminKey, "live", INGEST_INSTANCES);
	const headers = { Authorization: `Bearer ${costed.sdkKey}`, "Content-Type": "application/json" };
	const bodies = (metadata) =>
		costed.instanceKeys.map((agentKey) =>
			JSON.stringify({ agent_key: agentKey, action_type: "llm_call", metadata }),
		);
	const withModel = bodies(COSTED_CALL);
	const withoutModel = bodies(UNCOSTED_CALL);
	await inParallel(withModel, 8, (body) =>
		apiClient(base, costed.sdkKey)("POST", "/v1/actions", JSON.parse(body)),
	);
	const url = `${base}/v1/actions`;
	const [plain, priced] = await interleaved(
		[
			{ url, method: "POST", headers, bodies: withoutModel, generator, settleMs: SETTLE_MS },
			{ url, method: "POST", headers, bodies: withModel, generator, settleMs: SETTLE_MS },
		],
		{ rounds: size.rounds, seconds: size.ceilingSeconds, cpu: () => serviceCpu(worker.pid) },
	);
	const ratio = priced.rps / plain.rps;
	row(
		"ingest, LLM calls costed from model prices ÷ the same calls without a model (single events, same rounds)",
		`${fmt(ratio, 3)} (${fmt(priced.rps, 0)} vs ${fmt(plain.rps, 0)} req/s)`,
		"≥ 0.95",
		Number.isFinite(ratio) ? ratio >= 0.95 : undefined,
	);
	const batchKeys = costed.instanceKeys.slice(0, 10);
	await sleep(3_000);
	let events = 0;
	let seconds = 0;
	for (let round = 0; round < size.rounds; round++) {
		const run = await settledRound(() =>
			sendUsage(base, costed.sdkKey, batchKeys, size.roundBatches * 1000, 4, undefined, COSTED_CALL),
		);
		events += run.value;
		seconds += run.seconds;
		console.error(`  … round ${round + 1}, costed calls: ${fmt(run.value / run.seconds, 0)} events/s`);
	}
	row(
		`batch ingest of LLM calls costed from model prices (1,000-event batches, ${size.rounds} rounds of ${size.roundBatches})`,
		`${fmt(events / seconds, 0)} events/s`,
		"≥ 50,000 events/s",
		events / seconds >= 50_000,
	);
}

// The throughput ratios' load generator: wrk where it can be had (installed here when missing), else autocannon,
// which the table then says.
const wrk =
	runs("ceiling") || runs("hot") || runs("latency") || runs("costed")
		? ensureWrk()
		: { ok: false, reason: "not needed" };
if (!wrk.ok && wrk.reason !== "not needed") console.error(`  ! ${wrk.reason}: the ratios use autocannon`);
const generator = wrk.ok ? wrkLoad : undefined;
const generatorName = wrk.ok ? "wrk, 2 threads" : "autocannon (wrk missing)";
// How long a load waits for the flushes its events armed (a busy accumulator's come up to 5 s apart) before the
// next one starts.
const SETTLE_MS = 6_500;

/**
 * A batch round, then the wait for the flushes and archiving of its events, which are its work too: the runtime's
 * CPU meanwhile beyond idle is added as the time the loaded thread would have needed for it (load.mjs, settleMs).
 * Answers the round's value and those seconds, and the runtime CPU of both.
 */
async function settledRound(work) {
	const runtime = () => serviceCpu(worker.pid)?.["worker runtime"];
	const before = runtime();
	const run = await timed(work);
	const after = runtime();
	if (before === undefined || after === undefined) {
		await sleep(SETTLE_MS);
		return { ...run, cpu: 0 };
	}
	const left = await settle(runtime, { before, after, seconds: run.seconds, settleMs: SETTLE_MS });
	return { value: run.value, seconds: run.seconds + left.seconds, cpu: after - before + left.cpu };
}

// Single events as issue 31 measured them: one llm_call event at a time, over the instances of 64 subscriptions.
const INGEST_INSTANCES = 64;

function printTable(how) {
	const header = "| figure | measured | target | status |\n|---|---|---|---|";
	const flags = [quick ? "--quick" : "", only === null ? "" : `--only=${[...only].join(",")}`]
		.filter(Boolean)
		.join(" ");
	console.log(`\nnpm run bench${flags ? ` -- ${flags}` : ""} — ${how}\n`);
	console.log(header);
	for (const r of rows) console.log(`| ${r.figure} | ${r.measured} | ${r.target} | ${r.status} |`);
}

if (runs("startup")) await startupRows({ quick, row, fmt });
if (SCENARIOS.every((name) => name === "startup" || !runs(name))) {
	printTable(
		"wrangler check startup, then wrangler dev (local workerd) twice on one fresh --persist-to state",
	);
	process.exit();
}

const worker = await startWorker();
console.error(`bench (${quick ? "quick" : "full"}) on ${worker.base} — ${worker.how}`);
try {
	const { base } = worker;
	const admin = apiClient(base, worker.adminKey);
	const singleEvents = (env, metadata) =>
		env.instanceKeys.map((agentKey) =>
			JSON.stringify({ agent_key: agentKey, action_type: "llm_call", metadata }),
		);
	// Each accumulator first takes one event, so that what is timed is ingest, not the once-per-object start, and
	// the isolate has the key and the routes cached.
	const warm = (env, bodies) =>
		inParallel(bodies, 8, (body) => apiClient(base, env.sdkKey)("POST", "/v1/actions", JSON.parse(body)));

	const ingest = await provisionEnvironment(base, worker.adminKey, "live", INGEST_INSTANCES);
	const actions = singleEvents(ingest, { tokens: 10 });
	const sdkHeaders = { Authorization: `Bearer ${ingest.sdkKey}`, "Content-Type": "application/json" };
	await admin("GET", "/v1/agents");
	await warm(ingest, actions);
	// The batch rounds spread their batches over ten of the subscriptions, as they always have.
	const batchEnv = { ...ingest, instanceKeys: ingest.instanceKeys.slice(0, 10) };
	// The same traffic on a plan of ten filtered charges and two alerts (one on a metric, one on the amount) on
	// every subscription: what the accumulators' per-model metering and alert evaluation cost (§16, §18). Its
	// events carry the model one of the filters matches.
	const priced = runs("priced")
		? await provisionEnvironment(base, worker.adminKey, "test", INGEST_INSTANCES, FILTERED_PLAN)
		: null;
	const pricedActions = priced ? singleEvents(priced, { tokens: 10, model: "small" }) : [];
	const pricedHeaders = priced
		? { Authorization: `Bearer ${priced.sdkKey}`, "Content-Type": "application/json" }
		: {};
	if (priced) {
		await inParallelAlerts(priced);
		await warm(priced, pricedActions);
	}
	const pricedBatchEnv = priced ? { ...priced, instanceKeys: priced.instanceKeys.slice(0, 10) } : null;
	const single = { url: `${base}/v1/actions`, method: "POST", headers: sdkHeaders, bodies: actions };
	const hop = { url: `${base}/healthz/hop` };
	await fetch(hop.url);
	// Single-event req/s by wrk from the ingest rows, for the latency row's pace.
	let ingestCapacity;

	if (runs("ceiling")) {
		// The bare route by both generators and the one-hop ceiling, loaded in turns (with single events when the
		// ingest scenario runs), 64 connections each. The runtime thread's CPU per request of each (cpu.mjs).
		const routes = [{ url: `${base}/healthz` }, { url: `${base}/healthz`, generator }, { ...hop, generator }];
		// Single events leave flushes behind: each ingest window waits for them and pays for them (load.mjs).
		if (runs("ingest")) routes.push({ ...single, generator, settleMs: SETTLE_MS });
		if (priced) {
			routes.push({
				...single,
				headers: pricedHeaders,
				bodies: pricedActions,
				generator,
				settleMs: SETTLE_MS,
			});
		}
		const [byAutocannon, healthz, ceiling, events, pricedEvents] = await interleaved(routes, {
			rounds: size.rounds,
			seconds: size.ceilingSeconds,
			cpu: () => serviceCpu(worker.pid),
		});
		row(
			"load generators: GET /healthz by wrk vs by autocannon (64 connections, same rounds)",
			`wrk ${fmt(healthz.rps, 0)} vs autocannon ${fmt(byAutocannon.rps, 0)} req/s; the ratios below use ${wrk.ok ? "wrk" : "autocannon"}`,
			"wrk ≥ autocannon (the generator does not cap)",
			wrk.ok ? healthz.rps >= byAutocannon.rps : undefined,
		);
		row(
			`one-hop ceiling (GET /healthz/hop: one bare Durable Object call) ÷ GET /healthz (${generatorName})`,
			`${fmt(ceiling.rps / healthz.rps, 3)} (${fmt(ceiling.rps, 0)} ÷ ${fmt(healthz.rps, 0)} req/s)`,
			"",
		);
		if (events) {
			ingestCapacity = events.rps;
			const ingestRatio = events.rps / healthz.rps;
			const ceilingRatio = events.rps / ceiling.rps;
			row(
				`ingest ÷ GET /healthz (POST /v1/actions, single events over ${INGEST_INSTANCES} instances; ${generatorName}, 64 connections)`,
				`${fmt(ingestRatio, 3)} (${fmt(events.rps, 0)} ÷ ${fmt(healthz.rps, 0)} req/s)`,
				"≥ 0.5",
				Number.isFinite(ingestRatio) ? ingestRatio >= 0.5 : undefined,
			);
			row(
				"ingest ÷ one-hop ceiling (POST /v1/actions ÷ GET /healthz/hop, same rounds)",
				`${fmt(ceilingRatio, 3)} (${fmt(events.rps, 0)} ÷ ${fmt(ceiling.rps, 0)} req/s)`,
				"≥ 0.9",
				Number.isFinite(ceilingRatio) ? ceilingRatio >= 0.9 : undefined,
			);
		}
		// Where the ratios come from: the Worker's runtime thread saturates first (cpu.mjs).
		const runtime = (run) => run?.cpuPerRequest["worker runtime"];
		const proxy = (run) => run?.cpuPerRequest["proxy runtime"] ?? 0;
		if (runtime(healthz) !== undefined) {
			const measured = [
				["GET /healthz", healthz],
				["GET /healthz/hop", ceiling],
				["POST /v1/actions", events],
			].filter(([, run]) => run !== undefined);
			row(
				`worker runtime CPU per request: ${measured.map(([name]) => name).join(" / ")}`,
				`${measured.map(([, run]) => fmt(runtime(run), 0)).join(" / ")} µs (proxy runtime ${measured.map(([, run]) => fmt(proxy(run), 0)).join(" / ")} µs)`,
				"",
			);
		}
		if (pricedEvents) {
			const pricedRatio = pricedEvents.rps / events.rps;
			row(
				"ingest, 10 filtered charges + 2 alerts ÷ plain plan (single events, same rounds)",
				`${fmt(pricedRatio, 3)} (${fmt(pricedEvents.rps, 0)} vs ${fmt(events.rps, 0)} req/s; ${fmt(pricedEvents.rps / healthz.rps)} of /healthz)`,
				"≥ 0.9",
				pricedRatio >= 0.9,
			);
		}
	}
	if (runs("batch")) {
		// Batch ingest: 1,000-event batches spread over ten subscriptions, four in flight. Each subscription's
		// accumulator first takes one event, so that what is timed is ingest, not the once-per-object start (its
		// tables, its plan from D1, taking its instance over). With the priced scenario, rounds of the plain plan
		// alternate with rounds of the filtered one, so both see the same share of the machine's other work. A
		// round pays for the flushes and archiving of its own events, which mostly come after it (settledRound).
		// The runtime thread's CPU per event (cpu.mjs), a figure that moves less with the machine's other work.
		const sides = [{ env: batchEnv, seconds: 0, events: 0, cpu: 0 }];
		if (pricedBatchEnv) sides.push({ env: pricedBatchEnv, seconds: 0, events: 0, cpu: 0 });
		for (const side of sides) {
			await sendUsage(base, side.env.sdkKey, side.env.instanceKeys, side.env.instanceKeys.length);
		}
		for (let round = 0; round < size.rounds; round++) {
			for (const side of sides) {
				const run = await settledRound(() =>
					sendUsage(base, side.env.sdkKey, side.env.instanceKeys, size.roundBatches * 1000, 4),
				);
				side.seconds += run.seconds;
				side.events += run.value;
				side.cpu += run.cpu;
				console.error(
					`  … round ${round + 1}, ${side.env === batchEnv ? "plain" : "filtered"} plan: ${fmt(run.value / run.seconds, 0)} events/s`,
				);
			}
		}
		const [plain, filtered] = sides.map((side) => side.events / side.seconds);
		const plainCpu =
			sides[0].cpu > 0 ? `; runtime thread ${fmt(sides[0].cpu / sides[0].events, 1)} µs an event` : "";
		row(
			`batch ingest (1,000-event batches, ${size.rounds} rounds of ${size.roundBatches})`,
			`${fmt(plain, 0)} events/s${plainCpu}`,
			"≥ 50,000 events/s",
			plain >= 50_000,
		);
		if (filtered !== undefined) {
			const pricedRatio = filtered / plain;
			row(
				"batch ingest, 10 filtered charges + 2 alerts ÷ plain plan (alternating rounds)",
				`${fmt(pricedRatio, 3)} (${fmt(filtered, 0)} vs ${fmt(plain, 0)} events/s)`,
				"≥ 0.9",
				pricedRatio >= 0.9,
			);
		}
	}
	if (runs("costed")) await costedRows(base, worker.adminKey);
	if (runs("hot")) {
		for (const shards of [1, HOT_SHARDS]) await hotSubscriptionRows(base, worker.adminKey, shards);
	}
	if (runs("latency")) {
		// Latency of single events at a steady rate, beside the one-hop ceiling and /healthz at the same pace (what
		// one object call, and the local proxy and runtime, cost any request). The pace is half of what single events
		// reach by wrk in this run (measured here when the ingest rows did not): an open loop above capacity measures
		// only a growing queue.
		if (ingestCapacity === undefined) {
			const [capacity] = await interleaved([{ ...single, generator }], { rounds: 1, seconds: 3 });
			ingestCapacity = capacity.rps;
		}
		const rate = Math.max(1, Math.floor(ingestCapacity / 2));
		// The flushes and archiving that follow earlier loads (alarms 1.5 s after their last events) share the local
		// runtime's one thread: they are let finish first. The paced events' own flushes fall inside the measure.
		await sleep(3_000);
		const pace = { rate, seconds: size.latencySeconds };
		const bare = await paced({ url: `${base}/healthz`, ...pace });
		const ceiling = await paced({ ...hop, ...pace });
		const steady = await paced({ ...single, ...pace });
		const p = (run) => `p50 ${fmt(run.p50, 1)}, p99 ${fmt(run.p99, 1)} ms`;
		row(
			"single-event latency, open loop at half capacity (one request every 1/rate s)",
			`${rate} req/s (half of ${fmt(ingestCapacity, 0)}): POST /v1/actions ${p(steady)}; GET /healthz/hop ${p(ceiling)}; GET /healthz ${p(bare)}`,
			"p99 ≤ 50 ms",
			steady.p99 <= 50,
		);
	}
	if (runs("gate")) {
		// What the gate (authentication + rate limit) adds to an authenticated read.
		const adminHeaders = { Authorization: `Bearer ${worker.adminKey}` };
		const [bare, gateOnly, read] = await interleaved(
			[
				{ url: `${base}/healthz`, connections: 16 },
				{ url: `${base}/v1/no-such-route`, headers: adminHeaders, connections: 16, expectedStatus: 404 },
				{ url: `${base}/v1/agents`, headers: adminHeaders, connections: 16 },
			],
			{ rounds: size.rounds, seconds: size.seconds },
		);
		const gateShare = Math.max(0, gateOnly.mean - bare.mean) / read.mean;
		row(
			"auth + rate limit share of GET /v1/agents",
			`${fmt(gateShare * 100, 1)}% (gate ${fmt(gateOnly.mean - bare.mean)} ms of ${fmt(read.mean)} ms; healthz ${fmt(bare.mean)} ms)`,
			"≤ 30%",
			gateShare <= 0.3,
		);
	}
	if (runs("reservations")) {
		// A budget reservation against the entitlement check an agent would make instead, in the same rounds: both
		// over the 64 instances of the ingest rows, each subscription with a block budget on its total amount (so
		// the entitlement computes its budget too). A reservation is one call to the subscription's head, which
		// rates the period and sums its holds before holding; the check reads the same and holds nothing.
		await inParallel(ingest.subscriptionIds, 16, (subscriptionId) =>
			admin("POST", "/v1/alerts", { subscription_id: subscriptionId, threshold: 1e9, block: true }),
		);
		const sdkAuth = { Authorization: `Bearer ${ingest.sdkKey}` };
		let next = 0;
		const entitlementPaths = ingest.instanceKeys.map((key) => `/v1/entitlements?agent_key=${key}`);
		const rotatingPath = [
			{ setupRequest: (request) => ({ ...request, path: entitlementPaths[next++ % 64] }) },
		];
		const reservations = ingest.instanceKeys.map((key) =>
			JSON.stringify({ agent_key: key, amount: 0.01, ttl_seconds: 10 }),
		);
		const sdk = apiClient(base, ingest.sdkKey);
		await inParallel(ingest.instanceKeys, 8, (key) =>
			sdk("POST", "/v1/reservations", { agent_key: key, amount: 0.01, ttl_seconds: 10 }),
		);
		const [check, reserve] = await interleaved(
			[
				{ url: `${base}${entitlementPaths[0]}`, headers: sdkAuth, requests: rotatingPath, connections: 16 },
				{
					url: `${base}/v1/reservations`,
					method: "POST",
					headers: { ...sdkAuth, "Content-Type": "application/json" },
					bodies: reservations,
					connections: 16,
				},
			],
			{ rounds: size.rounds, seconds: size.seconds },
		);
		const ratio = reserve.mean / check.mean;
		row(
			"POST /v1/reservations latency ÷ GET /v1/entitlements latency (16 connections, same rounds, 64 budgets)",
			`${fmt(ratio)} (${fmt(reserve.mean)} ms ÷ ${fmt(check.mean)} ms; ${fmt(reserve.rps, 0)} vs ${fmt(check.rps, 0)} req/s)`,
			"≤ 1.5",
			ratio <= 1.5,
		);
	}
	if (runs("invoicing")) {
		// Invoicing: N subscriptions with little usage (test environment) vs 2N with a lot (live).
		const period = new Date().toISOString().slice(0, 7);
		const small = await provisionEnvironment(base, worker.adminKey, "test", size.subscriptions);
		const smallEvents = await sendUsage(base, small.sdkKey, small.instanceKeys, size.subscriptions);
		const large = await provisionEnvironment(base, worker.adminKey, "live", size.subscriptions * 2);
		const storedBefore = storeBytes(worker.state);
		const loading = performance.now();
		let reported = 0;
		const largeEvents = await sendUsage(base, large.sdkKey, large.instanceKeys, size.bigEvents, 4, (sent) => {
			if (sent - reported < 100_000) return;
			reported = sent;
			const seconds = (performance.now() - loading) / 1000;
			console.error(`  … ${sent} events loaded in ${fmt(seconds, 0)} s (${fmt(sent / seconds, 0)} events/s)`);
		});
		// Invoices are made on the 1st, long after the month's events reached D1: let the accumulators' alarms flush
		// what was just loaded (they fire 1.5 s after the first unflushed event), so that generation is timed on its
		// own. Usage still unflushed at generation is flushed by generation itself, and would be timed with it.
		await new Promise((resolve) => setTimeout(resolve, size.settleMs));
		// Bytes each store grew by per event loaded (the large environment's events, after their flush).
		const storedAfter = storeBytes(worker.state);
		const perEvent = (store) => fmt((storedAfter[store] - storedBefore[store]) / largeEvents, 1);
		row(
			`bytes per event stored (${largeEvents} events): D1 / accumulators / R2 archive`,
			`${perEvent("d1")} / ${perEvent("accumulators")} / ${perEvent("archive")} B`,
			"D1 ≈ 0",
		);
		// Generated per account, as the monthly cron fans out, and interleaved (one small-environment account, then two
		// large ones) so that both sides see the same share of whatever else the machine is doing.
		const seconds = { small: 0, large: 0 };
		const invoiced = { small: 0, large: 0 };
		const generate = async (side, client, accountId) => {
			const run = await timed(() =>
				client("POST", "/v1/invoices/generate", { billing_period: period, account_id: accountId }),
			);
			seconds[side] += run.seconds;
			invoiced[side] += run.value.invoices.length;
		};
		for (const [i, accountId] of small.accountIds.entries()) {
			await generate("small", small.api, accountId);
			for (const largeAccount of large.accountIds.slice(2 * i, 2 * i + 2)) {
				await generate("large", large.api, largeAccount);
			}
		}
		const growth = seconds.large / seconds.small;
		row(
			`invoicing ${size.subscriptions} subscriptions (${smallEvents} events; one call per account of 10)`,
			`${fmt(seconds.small)} s, ${invoiced.small} invoices`,
			"≤ 10 s (1,000)",
			seconds.small <= 10,
		);
		row(
			`invoicing ${size.subscriptions * 2} subscriptions (${largeEvents} events) ÷ ${size.subscriptions}`,
			`${fmt(growth)}× (${fmt(seconds.large)} s, ${invoiced.large} invoices)`,
			"≤ 2.2×",
			growth <= 2.2,
		);

		// Reports over few events (test environment) vs many (live), same shape of query.
		const range = `start_date=${period}-01&end_date=${new Date().toISOString().slice(0, 10)}`;
		for (const [name, path] of [
			["revenue by agent", `/v1/reports/revenue?${range}&group_by=agent`],
			["PnL", `/v1/reports/pnl?${range}`],
		]) {
			const [fewRun, manyRun] = await interleaved(
				[
					{ url: `${base}${path}`, headers: { Authorization: `Bearer ${small.adminKey}` }, connections: 4 },
					{ url: `${base}${path}`, headers: { Authorization: `Bearer ${large.adminKey}` }, connections: 4 },
				],
				{ rounds: size.rounds, seconds: size.reportSeconds * 2 },
			);
			const ratio = manyRun.mean / fewRun.mean;
			row(
				`${name} latency, ${largeEvents} events ÷ ${smallEvents}`,
				`${fmt(ratio)}× (${fmt(manyRun.mean)} ms vs ${fmt(fewRun.mean)} ms)`,
				"≤ 3×",
				ratio <= 3,
			);
		}
	}
	if (runs("documents")) {
		// An invoice PDF, one request at a time: wall time and the Worker runtime's CPU per document, and its size.
		const docs = await provisionEnvironment(base, worker.adminKey, "test", 1);
		await sendUsage(base, docs.sdkKey, docs.instanceKeys, 10);
		const period = new Date().toISOString().slice(0, 7);
		const { invoices } = await docs.api("POST", "/v1/invoices/generate", {
			billing_period: period,
			account_id: docs.accountIds[0],
		});
		const url = `${base}/v1/invoices/${invoices[0].id}/pdf`;
		const headers = { Authorization: `Bearer ${docs.adminKey}` };
		const fetchPdf = async () => {
			const response = await fetch(url, { headers });
			if (!response.ok) throw new Error(`GET ${url} → ${response.status}`);
			return (await response.arrayBuffer()).byteLength;
		};
		await fetchPdf();
		const cpuBefore = serviceCpu(worker.pid);
		let bytes = 0;
		const run = await timed(async () => {
			for (let i = 0; i < size.pdfs; i++) bytes = await fetchPdf();
		});
		const cpuAfter = serviceCpu(worker.pid);
		// CPU ms per PDF: the Worker's runtime thread, and every process of the local service (proxy included).
		const cpuMs = (role) => {
			const used = (cpu) =>
				role ? (cpu?.[role] ?? 0) : Object.values(cpu ?? {}).reduce((sum, us) => sum + us, 0);
			return fmt((used(cpuAfter) - used(cpuBefore)) / 1000 / size.pdfs, 0);
		};
		const cpu = cpuBefore
			? `, CPU ${cpuMs("worker runtime")} ms in the Worker's runtime (${cpuMs()} ms all processes)`
			: "";
		row(
			`invoice PDF (${size.pdfs} one-page documents, one at a time)`,
			`${fmt((run.seconds * 1000) / size.pdfs, 0)} ms a PDF${cpu}; ${fmt(bytes / 1024, 1)} KB`,
			"≤ 100 KB",
			bytes <= 102_400,
		);
	}
} finally {
	await worker.stop();
}

printTable(worker.how);
