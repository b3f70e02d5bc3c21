import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { finalizeDueDrafts } from "../../src/invoicing/finalize";
import { createAccount, expectError, get, patch, post } from "../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generate,
	instanceKey,
	linesOf,
	outboxEvents,
	sendActions,
	subscribe,
} from "./fixtures";

// Draft invoices (docs/credit-notes.md#draft-invoices): with grace days, a period's invoice is a draft first.
const plan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.5,
		},
	],
};

async function graceCustomer(graceDays = 3) {
	const ratePlan = await createPlan(plan);
	const account = await createAccount(undefined, { invoice_grace_days: graceDays });
	const instance = instanceKey();
	const subscription = await subscribe(account.id, ratePlan.id, [instance]);
	return { account, instance, subscription };
}

async function draftOf(accountId: string) {
	const { status, invoices } = await generate(currentPeriod(), accountId);
	expect(status).toBe(201);
	expect(invoices).toHaveLength(1);
	return invoices[0] as (typeof invoices)[number];
}

const invoiceOf = async (id: string) => (await get(`/v1/invoices/${id}`)).body;

describe("accounts' invoice_grace_days", () => {
	it("defaults to 0, is set on create and PATCH, 0–30 whole days", async () => {
		const plain = await createAccount();
		expect((await get(`/v1/accounts/${plain.id}`)).body.invoice_grace_days).toBe(0);
		const account = await createAccount(undefined, { invoice_grace_days: 7 });
		expect((await get(`/v1/accounts/${account.id}`)).body.invoice_grace_days).toBe(7);
		const updated = await patch(`/v1/accounts/${account.id}`, { invoice_grace_days: 30 });
		expect(updated.status).toBe(200);
		expect(updated.body.invoice_grace_days).toBe(30);
		for (const bad of [31, -1, 1.5, "3"]) {
			expectError(
				await patch(`/v1/accounts/${account.id}`, { invoice_grace_days: bad }),
				400,
				"validation_error",
			);
			expectError(
				await post("/v1/accounts", { name: "X", email: "x@x.test", invoice_grace_days: bad }),
				400,
				"validation_error",
			);
		}
		expect((await get(`/v1/accounts/${account.id}`)).body.invoice_grace_days).toBe(30);
	});
});

describe("draft invoices", () => {
	it("are made as drafts: no number, no credits, no webhook, listed by status=draft, not revenue", async () => {
		const { account, instance } = await graceCustomer();
		await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 100 });
		await sendActions(actions(instance, "call", 4));
		const draft = await draftOf(account.id);
		expect(draft).toMatchObject({
			status: "draft",
			number: null,
			amount: 12,
			credits_applied: 0,
			amount_due: 12,
		});
		expect(linesOf(draft)).toEqual([
			["base_fee", 1, 10],
			["calls", 4, 2],
		]);
		expect(await outboxEvents("invoice.created", draft.id)).toEqual([]);
		const drafts = (await get(`/v1/invoices?status=draft&account_id=${account.id}`)).body;
		expect(drafts.invoices.map((i: { id: string }) => i.id)).toEqual([draft.id]);
		expect((await get(`/v1/invoices?status=open&account_id=${account.id}`)).body.total).toBe(0);
		const period = currentPeriod();
		const revenue = await get(
			`/v1/reports/revenue?start_date=${period}-01&end_date=${period}-28&group_by=customer`,
		);
		expect(revenue.body.breakdown.map((row: { id: string }) => row.id)).not.toContain(account.id);
		// Neither paid nor credited while a draft.
		expectError(await post(`/v1/invoices/${draft.id}/pay`, {}), 409, "conflict");
		expectError(
			await post(`/v1/invoices/${draft.id}/credit-notes`, { amount: 1, reason: "other" }),
			409,
			"conflict",
		);
	});

	it("late usage updates the draft's lines instead of making a supplementary invoice; one-off lines stay", async () => {
		const { account, instance } = await graceCustomer();
		await sendActions(actions(instance, "call", 2));
		const draft = await draftOf(account.id);
		expect(draft.amount).toBe(11);

		const added = await post(`/v1/invoices/${draft.id}/lines`, {
			description: "Onboarding workshop",
			amount: 450,
		});
		expect(added.status, JSON.stringify(added.body)).toBe(201);
		expect(added.body).toMatchObject({ status: "draft", amount: 461 });
		expect(added.body.line_items.at(-1)).toEqual({
			metric: "one-off",
			description: "Onboarding workshop",
			quantity: 1,
			amount: 450,
			original_amount: 450,
			original_currency: "USD",
		});

		await sendActions(actions(instance, "call", 6));
		const again = await generate(currentPeriod(), account.id);
		expect(again).toEqual({ status: 200, invoices: [] });
		const updated = await invoiceOf(draft.id);
		expect(updated).toMatchObject({ status: "draft", number: null, amount: 464 });
		expect(linesOf(updated)).toEqual([
			["base_fee", 1, 10],
			["calls", 8, 4],
			["one-off", 1, 450],
		]);
		const { n } = (await env.DB.prepare("SELECT COUNT(*) AS n FROM invoices WHERE account_id = ?1")
			.bind(account.id)
			.first()) as { n: number };
		expect(n).toBe(1);
	});

	it("finalizing by hand numbers it, applies credits and emits invoice.created; later usage is supplementary", async () => {
		const { account, instance } = await graceCustomer();
		await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 5 });
		await sendActions(actions(instance, "call", 2));
		const draft = await draftOf(account.id);
		await post(`/v1/invoices/${draft.id}/lines`, { description: "Setup", amount: 20 });
		await sendActions(actions(instance, "call", 2));

		const response = await post(`/v1/invoices/${draft.id}/finalize`);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const issued = response.body;
		// The late calls went on the draft before it was issued: 10 + 4 × 0.5 + 20 = 32, 5 of it paid by credits.
		expect(issued).toMatchObject({
			status: "open",
			number: expect.stringMatching(/^INV-\d{6}$/),
			amount: 32,
			credits_applied: 5,
			amount_due: 27,
		});
		expect(issued.issued_at >= draft.issued_at).toBe(true);
		const [created] = await outboxEvents("invoice.created", draft.id);
		expect(created?.data).toMatchObject({ invoice_id: draft.id, amount: 32, status: "open" });
		expectError(await post(`/v1/invoices/${draft.id}/finalize`), 409, "conflict");
		expectError(
			await post(`/v1/invoices/${draft.id}/lines`, { description: "x", amount: 1 }),
			409,
			"conflict",
		);
		// Issued, it is revenue: its customer's row is its amount, one-off line included.
		const period = currentPeriod();
		const revenue = await get(
			`/v1/reports/revenue?start_date=${period}-01&end_date=${period}-28&group_by=customer`,
		);
		expect(revenue.body.breakdown).toContainEqual(expect.objectContaining({ id: account.id, revenue: 32 }));

		// Usage after the draft was issued: a supplementary invoice of the calls alone, the one-off not repeated.
		await sendActions(actions(instance, "call", 2));
		const { status, invoices } = await generate(currentPeriod(), account.id);
		expect(status).toBe(201);
		expect(invoices).toHaveLength(1);
		expect(invoices[0]).toMatchObject({ kind: "supplementary", status: "open", amount: 1 });
		expect(linesOf(invoices[0] as (typeof invoices)[number])).toEqual([["calls", 2, 1]]);
	});

	it("void discards a draft: readable, void, never numbered, no webhook; the period is drafted again", async () => {
		const { account, instance } = await graceCustomer();
		await sendActions(actions(instance, "call", 1));
		const draft = await draftOf(account.id);
		const voided = await post(`/v1/invoices/${draft.id}/void`);
		expect(voided.status).toBe(200);
		expect(voided.body).toMatchObject({
			status: "void",
			number: null,
			voided_at: expect.stringMatching(/Z$/),
		});
		expect(await outboxEvents("invoice.voided", draft.id)).toEqual([]);
		expectError(await post(`/v1/invoices/${draft.id}/finalize`), 409, "conflict");
		const next = await draftOf(account.id);
		expect(next).toMatchObject({ status: "draft", amount: 10.5 });
		expect(next.id).not.toBe(draft.id);
	});

	it("one-off lines: 400 for bad bodies, 404 for an unknown invoice, 409 below zero or on an issued invoice", async () => {
		const { account } = await graceCustomer();
		const draft = await draftOf(account.id);
		for (const body of [
			{ description: "x", amount: 0 },
			{ description: "", amount: 1 },
			{ amount: 1 },
			{ description: "x" },
			{ description: "x", amount: 1, metric: "calls" },
			{ description: "x", amount: 1.001 },
		]) {
			expectError(await post(`/v1/invoices/${draft.id}/lines`, body), 400, "validation_error");
		}
		expectError(
			await post(`/v1/invoices/${draft.id}/lines`, { description: "x", amount: -10.01 }),
			409,
			"conflict",
		);
		expect((await invoiceOf(draft.id)).line_items).toHaveLength(2);
		const deduction = await post(`/v1/invoices/${draft.id}/lines`, { description: "Goodwill", amount: -10 });
		expect(deduction.status).toBe(201);
		expect(deduction.body.amount).toBe(0);
		expectError(
			await post("/v1/invoices/inv_01jd0000000000000000000000/lines", { description: "x", amount: 1 }),
			404,
			"not_found",
		);
		expectError(await post("/v1/invoices/inv_01jd0000000000000000000000/finalize"), 404, "not_found");
		const plain = await createAccount();
		const ratePlan = await createPlan(plan);
		await subscribe(plain.id, ratePlan.id, [instanceKey()]);
		const { invoices } = await generate(currentPeriod(), plain.id);
		expect(invoices[0]?.status).toBe("open");
		expectError(
			await post(`/v1/invoices/${invoices[0]?.id}/lines`, { description: "x", amount: 1 }),
			409,
			"conflict",
		);
	});

	it("the cron finalizes drafts whose grace passed after the period's end, with invoice.created", async () => {
		const { account, instance } = await graceCustomer(2);
		await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 50 });
		await sendActions(actions(instance, "call", 2));
		const draft = await draftOf(account.id);
		const [year, month] = currentPeriod().split("-").map(Number) as [number, number];
		const periodEnd = Date.UTC(year, month, 1);
		// Not yet: a day of the two left.
		await finalizeDueDrafts(env, new Date(periodEnd + 86_400_000));
		expect((await invoiceOf(draft.id)).status).toBe("draft");
		await finalizeDueDrafts(env, new Date(periodEnd + 2 * 86_400_000 + 1000));
		const issued = await invoiceOf(draft.id);
		expect(issued).toMatchObject({
			status: "paid",
			number: expect.stringMatching(/^INV-/),
			amount: 11,
			credits_applied: 11,
			amount_due: 0,
		});
		const [created] = await outboxEvents("invoice.created", draft.id);
		expect(created?.data).toMatchObject({ invoice_id: draft.id, status: "paid", amount: 11 });
		expect((await outboxEvents("invoice.paid", draft.id)).map((e) => e.data.status)).toEqual(["paid"]);
	});
});
