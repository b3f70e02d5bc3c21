// Crash test, part 1: kill -9 of `wrangler dev` in the middle of an Idempotency-Key POST /v1/invoices/generate
// over a few hundred subscriptions, restart on the same state. Each batch that stored invoices marked the key
// committed with their ids (docs/conventions.md#the-idempotency-key-header), so the repeat, at once, answers the
// invoices the dead request made and finishes the rest: every subscription invoiced, none twice.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { client, inParallel, newState, peek, peekCount, startWorker } from "./harness.mjs";

const SUBSCRIPTIONS = Number(process.env.CRASH_SUBSCRIPTIONS ?? 300);
const period = new Date().toISOString().slice(0, 7);

async function allInvoices(api) {
	const invoices = [];
	for (let offset = 0; ; offset += 100) {
		const page = await api("GET", `/v1/invoices?limit=100&offset=${offset}&billing_period=${period}`);
		assert.equal(page.status, 200, JSON.stringify(page.body));
		invoices.push(...page.body.invoices);
		if (invoices.length >= page.body.total) return invoices;
	}
}

describe("kill -9 during an Idempotency-Key invoice generation", { timeout: 600_000 }, () => {
	const state = newState();
	let worker;
	let api;
	const subscriptionIds = [];

	before(async () => {
		worker = await startWorker(state);
		api = client(worker.base, state.adminKey);
		const plan = await api("POST", "/v1/pricing/rate-plans", {
			name: "Crash",
			base_fee: 10,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.5,
				},
			],
		});
		assert.equal(plan.status, 201, JSON.stringify(plan.body));
		const instances = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `crash-bot-${i}`);
		await inParallel(instances, 8, async (instance) => {
			const account = await api("POST", "/v1/accounts", { name: instance, email: `${instance}@example.com` });
			assert.equal(account.status, 201, JSON.stringify(account.body));
			const subscription = await api("POST", "/v1/subscriptions", {
				account_id: account.body.id,
				rate_plan_id: plan.body.id,
				agent_instance_ids: [instance],
			});
			assert.equal(subscription.status, 201, JSON.stringify(subscription.body));
			subscriptionIds.push(subscription.body.id);
		});
		const sdk = await api("POST", "/v1/api-keys", { type: "sdk" });
		const events = instances.flatMap((agent_key) => [0, 1].map(() => ({ agent_key, action_type: "call" })));
		for (let i = 0; i < events.length; i += 1000) {
			const sent = await client(worker.base, sdk.body.key)("POST", "/v1/actions/batch", {
				events: events.slice(i, i + 1000),
			});
			assert.equal(sent.status, 201, JSON.stringify(sent.body));
		}
	});

	after(async () => {
		await worker?.stop();
		state.remove();
	});

	it("answers what the dead request made and completes generation exactly once", async () => {
		const body = { billing_period: period };
		const headers = { "Idempotency-Key": "generate-crash" };
		const first = api("POST", "/v1/invoices/generate", body, headers).catch((error) => ({ crashed: error }));

		// Kill it once some invoices exist and before all do, watching the D1 file from outside the Worker.
		let made = 0;
		for (const deadline = Date.now() + 120_000; Date.now() < deadline && made === 0; ) {
			made = peekCount(state, "invoices");
			if (made === 0) await new Promise((r) => setTimeout(r, 5));
		}
		await worker.crash();
		const outcome = await first;
		assert.ok(made > 0, "the generation made no invoice before the crash");
		assert.ok(
			outcome.crashed,
			`the first request finished before the crash (${outcome.status}); use more subscriptions`,
		);

		worker = await startWorker(state);
		api = client(worker.base, state.adminKey);
		const partial = (await allInvoices(api)).length;
		assert.ok(
			partial > 0 && partial < SUBSCRIPTIONS,
			`after the crash: ${partial} of ${SUBSCRIPTIONS} invoiced`,
		);
		console.log(`crashed with ${partial} of ${SUBSCRIPTIONS} subscriptions invoiced`);

		// The dead first request's claim, as the crash left it: committed with the invoices its batches stored.
		const [claim] = peek(
			state,
			"SELECT state, resources FROM idempotency_records WHERE key = 'generate-crash'",
		);
		assert.equal(claim?.state, "committed");
		assert.equal(JSON.parse(claim.resources).length, partial);

		const repeat = await api("POST", "/v1/invoices/generate", body, headers);
		assert.equal(repeat.status, 201, JSON.stringify(repeat.body).slice(0, 500));
		assert.equal(repeat.headers.get("Idempotent-Replayed"), "true");
		assert.equal(repeat.body.invoices.length, SUBSCRIPTIONS);

		const invoices = await allInvoices(api);
		const perSubscription = new Map();
		for (const invoice of invoices) {
			perSubscription.set(invoice.subscription_id, (perSubscription.get(invoice.subscription_id) ?? 0) + 1);
		}
		assert.equal(invoices.length, SUBSCRIPTIONS, "one invoice per subscription");
		assert.deepEqual([...perSubscription.keys()].sort(), [...subscriptionIds].sort());
		for (const [id, count] of perSubscription) assert.equal(count, 1, `${id} invoiced ${count} times`);
		for (const invoice of invoices) assert.equal(invoice.amount, 11, JSON.stringify(invoice));

		const replay = await api("POST", "/v1/invoices/generate", body, headers);
		assert.equal(replay.headers.get("Idempotent-Replayed"), "true");
		assert.deepEqual(replay.body, repeat.body);
	});
});
