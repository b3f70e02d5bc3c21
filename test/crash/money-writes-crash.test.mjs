// Crash test, part 3: kill -9 of `wrangler dev` while a credit note with refund, and a draft's one-off line, are
// being stored under an Idempotency-Key; restart on the same state and repeat with the same key. Wherever the kill
// lands, the repeat answers what was done: one credit note and one refund, one line — still answered after the
// draft was finalized — never a second write, never an error for a stored one (docs/conventions.md).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { client, newState, peek, startWorker } from "./harness.mjs";

const period = new Date().toISOString().slice(0, 7);
const ABANDONED_AFTER_MS = 60_000;

/** Sends `request`, kills the Worker as soon as `stored()` sees its write in the D1 file (or it answered). */
async function killDuring(worker, request, stored) {
	let answered = false;
	const first = request().then(
		(r) => {
			answered = true;
			return r;
		},
		(error) => ({ crashed: error }),
	);
	for (const deadline = Date.now() + 30_000; Date.now() < deadline && !answered && !stored(); ) {
		await new Promise((r) => setTimeout(r, 1));
	}
	await worker.crash();
	return first;
}

/** The repeat, after the 60 s of a dead claim only when the crash came before the write (nothing to answer). */
async function repeatAfter(state, key, send) {
	const [claim] = peek(state, `SELECT state, created_at FROM idempotency_records WHERE key = '${key}'`);
	if (claim?.state === "in_progress") {
		await new Promise((r) =>
			setTimeout(r, Math.max(0, Date.parse(claim.created_at) + ABANDONED_AFTER_MS + 1000 - Date.now())),
		);
	}
	return { claim, repeat: await send() };
}

describe("kill -9 during money writes with an Idempotency-Key", { timeout: 300_000 }, () => {
	const state = newState();
	let worker;
	let api;

	before(async () => {
		worker = await startWorker(state);
		api = client(worker.base, state.adminKey);
	});

	after(async () => {
		await worker?.stop();
		state.remove();
	});

	async function invoiceOf(graceDays) {
		const plan = await api("POST", "/v1/pricing/rate-plans", { name: "Crash", base_fee: 100, charges: [] });
		const account = await api("POST", "/v1/accounts", {
			name: "Crash",
			email: "crash@example.com",
			invoice_grace_days: graceDays,
		});
		const instance = `crash-${Math.random().toString(36).slice(2, 10)}`;
		const subscription = await api("POST", "/v1/subscriptions", {
			account_id: account.body.id,
			rate_plan_id: plan.body.id,
			agent_instance_ids: [instance],
		});
		assert.equal(subscription.status, 201, JSON.stringify(subscription.body));
		const generated = await api("POST", "/v1/invoices/generate", {
			billing_period: period,
			account_id: account.body.id,
		});
		assert.equal(generated.status, 201, JSON.stringify(generated.body));
		return generated.body.invoices[0];
	}

	it("a credit note with refund is issued once, and its repeat answers it", async () => {
		const invoice = await invoiceOf(0);
		assert.equal((await api("POST", `/v1/invoices/${invoice.id}/pay`, {})).status, 200);
		const path = `/v1/invoices/${invoice.id}/credit-notes`;
		const body = { amount: 25.5, reason: "duplicate", refund: true };
		const headers = { "Idempotency-Key": "crash-refund" };
		const notes = () => peek(state, `SELECT id FROM credit_notes WHERE invoice_id = '${invoice.id}'`);
		await killDuring(
			worker,
			() => api("POST", path, body, headers),
			() => notes().length > 0,
		);

		worker = await startWorker(state);
		api = client(worker.base, state.adminKey);
		const { claim, repeat } = await repeatAfter(state, "crash-refund", () =>
			api("POST", path, body, headers),
		);
		console.log(`credit note: the kill left the key ${claim?.state ?? "absent"}`);
		assert.equal(repeat.status, 201, JSON.stringify(repeat.body));
		const stored = notes();
		assert.equal(stored.length, 1, "one credit note");
		assert.equal(repeat.body.id, stored[0].id);
		const refunds = peek(
			state,
			`SELECT amount FROM payments WHERE invoice_id = '${invoice.id}' AND kind = 'refund'`,
		);
		assert.deepEqual(
			refunds.map((r) => r.amount),
			["-25.5"],
			"one refund",
		);
		const again = await api("POST", path, body, headers);
		assert.equal(again.headers.get("Idempotent-Replayed"), "true");
		assert.deepEqual(again.body, repeat.body);
	});

	it("a draft's one-off line is added once, and its repeat after finalize answers it", async () => {
		const draft = await invoiceOf(3);
		assert.equal(draft.status, "draft");
		const path = `/v1/invoices/${draft.id}/lines`;
		const line = { description: "Workshop", amount: 450 };
		const headers = { "Idempotency-Key": "crash-line" };
		const lines = () =>
			peek(state, `SELECT 1 FROM invoice_lines WHERE invoice_id = '${draft.id}' AND metric = 'one-off'`);
		await killDuring(
			worker,
			() => api("POST", path, line, headers),
			() => lines().length > 0,
		);

		worker = await startWorker(state);
		api = client(worker.base, state.adminKey);
		const stored = lines().length;
		const finalized = await api("POST", `/v1/invoices/${draft.id}/finalize`);
		assert.equal(finalized.status, 200, JSON.stringify(finalized.body));
		const { claim, repeat } = await repeatAfter(state, "crash-line", () => api("POST", path, line, headers));
		console.log(`draft line: the kill left the key ${claim?.state ?? "absent"}, ${stored} line stored`);
		if (stored === 1) {
			assert.equal(repeat.status, 201, JSON.stringify(repeat.body));
			assert.equal(repeat.body.amount, 550);
		} else {
			// Nothing was stored before the kill: the draft is issued now, and the line honestly refused.
			assert.equal(repeat.status, 409, JSON.stringify(repeat.body));
		}
		assert.equal(lines().length, stored, "no second line");
		const invoice = await api("GET", `/v1/invoices/${draft.id}`);
		assert.equal(invoice.body.amount, 100 + 450 * stored);
	});
});
