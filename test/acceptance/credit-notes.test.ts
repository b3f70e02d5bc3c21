/**
 * Black-box checks of credit notes, refunds and draft invoices, written from docs/credit-notes.md's promises:
 * the credit note's shape and split, the invoice's figures after it, drafts' lifecycle, permissions and retries.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { creditNote, openInvoice, paidInvoice, storedCreditNotes } from "../credit-notes/fixtures";
import { createAccount, createKey, expectError, get, post } from "../helpers";
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
} from "../invoicing/fixtures";

const invoiceOf = async (id: string) => (await get(`/v1/invoices/${id}`)).body;

async function computeInvoice(baseFee = 10, graceDays = 3) {
	const plan = await createPlan({ base_fee: baseFee, charges: [] });
	const account = await createAccount(undefined, { invoice_grace_days: graceDays });
	await subscribe(account.id, plan.id, [instanceKey()]);
	const { invoices } = await generate(currentPeriod(), account.id);
	expect(invoices).toHaveLength(1);
	const draft = invoices[0] as (typeof invoices)[number];
	expect(draft).toMatchObject({ status: "draft", number: null });
	return { account, draft };
}

describe("credit notes: shape and split", () => {
	it("lines add up exactly, in decimal, and the body and webhook carry the contract's fields", async () => {
		const invoice = await openInvoice(1);
		const note = await creditNote(invoice.id, {
			lines: [
				{ description: "a", amount: 0.1 },
				{ description: "b", amount: 0.2 },
			],
			reason: "order_change",
		});
		expect(Object.keys(note).sort()).toEqual(
			[
				"account_id",
				"amount",
				"applied",
				"created_at",
				"currency",
				"id",
				"invoice_id",
				"lines",
				"memo",
				"number",
				"reason",
			].sort(),
		);
		expect(note.number).toMatch(/^CN-\d{6}$/);
		expect(note.amount).toBe(0.3);
		expect(note.applied).toEqual({ to_invoice: 0.3, refunded: 0, credited: 0 });
		expect((await invoiceOf(invoice.id)).amount_due).toBe(0.7);
		const [event] = await outboxEvents("credit_note.created", invoice.id);
		expect(event?.data).toEqual({
			credit_note_id: note.id,
			invoice_id: invoice.id,
			account_id: invoice.account_id,
			amount: 0.3,
			currency: "USD",
		});
		// GET one answers the same body; the list filters by invoice and by account.
		expect((await get(`/v1/credit-notes/${note.id}`)).body).toEqual(note);
		const byInvoice = (await get(`/v1/credit-notes?invoice_id=${invoice.id}`)).body;
		expect(byInvoice.credit_notes).toEqual([note]);
		const byAccount = (await get(`/v1/credit-notes?account_id=${invoice.account_id}`)).body;
		expect(byAccount.credit_notes.map((n: { id: string }) => n.id)).toEqual([note.id]);
		expect((await get("/v1/credit-notes?invoice_id=inv_01jd0000000000000000000000")).body.total).toBe(0);
	});

	it("every reason of the list is accepted", async () => {
		const invoice = await openInvoice(100);
		for (const reason of [
			"duplicate",
			"fraudulent",
			"order_change",
			"product_unsatisfactory",
			"billing_error",
			"other",
		]) {
			const note = await creditNote(invoice.id, { amount: 1, reason });
			expect(note.reason).toBe(reason);
		}
	});

	it("a refund never leaves amount_remaining below 0, and the invoice lists its credit notes in order", async () => {
		const invoice = await paidInvoice(50);
		const a = await creditNote(invoice.id, { amount: 20, reason: "duplicate", refund: true });
		const b = await creditNote(invoice.id, { amount: 30, reason: "duplicate", refund: true });
		expect(a.applied).toEqual({ to_invoice: 0, refunded: 20, credited: 0 });
		expect(b.applied).toEqual({ to_invoice: 0, refunded: 30, credited: 0 });
		const after = await invoiceOf(invoice.id);
		expect(after).toMatchObject({
			status: "paid",
			amount_paid: 0,
			amount_remaining: 0,
			amount_credited: 50,
		});
		expect([...after.credit_notes].sort()).toEqual([a.id, b.id].sort());
		// Fully credited: nothing more can be taken.
		expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 0.01, reason: "other" }),
			409,
			"conflict",
		);
	});

	it("on an invoice paid partly by credits, a full refund returns the money and the credits", async () => {
		const first = await openInvoice(100);
		await post(`/v1/accounts/${first.account_id}/credit-grants`, { amount: 40 });
		const plan = await createPlan({ base_fee: 100, charges: [] });
		await subscribe(first.account_id, plan.id, [instanceKey()]);
		const second = (await generate(currentPeriod(), first.account_id)).invoices[0];
		expect(second).toMatchObject({ credits_applied: 40, amount_due: 60 });
		expect((await post(`/v1/invoices/${second?.id}/pay`, {})).body).toMatchObject({ amount_paid: 60 });
		const note = await creditNote(second?.id as string, { amount: 100, reason: "fraudulent", refund: true });
		expect(note.applied).toEqual({ to_invoice: 0, refunded: 60, credited: 40 });
		expect(await invoiceOf(second?.id as string)).toMatchObject({
			status: "paid",
			amount_paid: 0,
			amount_remaining: 0,
			amount_credited: 100,
		});
		const balance = (await get(`/v1/accounts/${first.account_id}/balance`)).body;
		expect(balance.available).toBe(40);
	});

	it("an invoice with a payment cannot be voided (409)", async () => {
		const invoice = await paidInvoice(10);
		expectError(await post(`/v1/invoices/${invoice.id}/void`), 409, "conflict");
		expect((await invoiceOf(invoice.id)).status).toBe("paid");
	});

	it("404 for another environment's invoice, nothing stored", async () => {
		const testKey = await createKey("admin", "test");
		const invoice = await openInvoice(10, testKey);
		expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 1, reason: "other" }),
			404,
			"not_found",
		);
		expect(await storedCreditNotes(invoice.id)).toEqual([]);
	});

	it("a read-only key reads credit notes and their PDF but cannot create one", async () => {
		const invoice = await openInvoice(10);
		const note = await creditNote(invoice.id, { amount: 2, reason: "other" });
		const readOnly = await createKey("read-only");
		expect((await get(`/v1/credit-notes/${note.id}`, { key: readOnly })).status).toBe(200);
		expect((await get(`/v1/credit-notes?invoice_id=${invoice.id}`, { key: readOnly })).status).toBe(200);
		const pdf = await get(`/v1/credit-notes/${note.id}/pdf`, { key: readOnly });
		expect(pdf.status).toBe(200);
		expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
		expectError(
			await post(
				`/v1/invoices/${invoice.id}/credit-notes`,
				{ amount: 1, reason: "other" },
				{ key: readOnly },
			),
			403,
			"forbidden",
		);
		expect(await storedCreditNotes(invoice.id)).toHaveLength(1);
	});
});

describe("draft invoices: acceptance", () => {
	it("a credit note on a draft is 409 and stores nothing", async () => {
		const { draft } = await computeInvoice();
		expectError(
			await post(`/v1/invoices/${draft.id}/credit-notes`, { amount: 1, reason: "other" }),
			409,
			"conflict",
		);
		expect(await storedCreditNotes(draft.id)).toEqual([]);
		expect(await invoiceOf(draft.id)).toMatchObject({
			status: "draft",
			amount_credited: 0,
			credit_notes: [],
		});
	});

	it("finalizing sets due_at from issued_at and the account's net terms", async () => {
		const { account, draft } = await computeInvoice();
		const response = await post(`/v1/invoices/${draft.id}/finalize`);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const issued = response.body;
		expect(issued.number).toMatch(/^INV-\d{6}$/);
		const terms = (await get(`/v1/accounts/${account.id}`)).body.net_terms_days as number;
		expect(Date.parse(issued.due_at) - Date.parse(issued.issued_at)).toBe(terms * 86_400_000);
		expect((await outboxEvents("invoice.created", draft.id)).map((e) => e.data.status)).toEqual(["open"]);
	});

	it("a draft of the open period still counts in its live margins, once", async () => {
		const plan = await createPlan({ base_fee: 10, charges: [] });
		const account = await createAccount(undefined, { invoice_grace_days: 3 });
		await subscribe(account.id, plan.id, [instanceKey()]);
		const margins = `/v1/reports/margins?billing_period=${currentPeriod()}&group_by=customer`;
		const rowOf = async () =>
			(await get(margins)).body.breakdown.find((row: { id: string }) => row.id === account.id);
		expect(await rowOf()).toMatchObject({ revenue: 10 });
		// Drafting the period's invoice changes nothing of what the period would bill if it closed now.
		const { invoices } = await generate(currentPeriod(), account.id);
		expect(invoices[0]?.status).toBe("draft");
		expect(await rowOf()).toMatchObject({ revenue: 10 });
		await post(`/v1/invoices/${invoices[0]?.id}/lines`, { description: "Setup", amount: 5 });
		expect(await rowOf()).toMatchObject({ revenue: 15 });
		// Not in the revenue report, which counts issued invoices only.
		const period = currentPeriod();
		const revenue = await get(
			`/v1/reports/revenue?start_date=${period}-01&end_date=${period}-28&group_by=customer`,
		);
		expect(revenue.body.breakdown.map((row: { id: string }) => row.id)).not.toContain(account.id);
	});

	it("a voided draft takes no lines and is never revenue", async () => {
		const { account, draft } = await computeInvoice(77);
		expect((await post(`/v1/invoices/${draft.id}/void`)).status).toBe(200);
		expectError(
			await post(`/v1/invoices/${draft.id}/lines`, { description: "x", amount: 1 }),
			409,
			"conflict",
		);
		expect(await invoiceOf(draft.id)).toMatchObject({ status: "void", number: null, amount: 77 });
		const period = currentPeriod();
		const revenue = await get(
			`/v1/reports/revenue?start_date=${period}-01&end_date=${period}-28&group_by=customer`,
		);
		expect(revenue.body.breakdown.map((row: { id: string }) => row.id)).not.toContain(account.id);
	});

	it("a voided draft takes no invoice number: the next finalized one follows the last issued", async () => {
		const { draft: discarded } = await computeInvoice();
		expect((await post(`/v1/invoices/${discarded.id}/void`)).status).toBe(200);
		const { draft } = await computeInvoice();
		const { last } = (await env.DB.prepare(
			"SELECT MAX(number) AS last FROM invoices WHERE environment = 'live'",
		).first()) as { last: number };
		const issued = (await post(`/v1/invoices/${draft.id}/finalize`)).body;
		expect(issued.number).toBe(`INV-${String(last + 1).padStart(6, "0")}`);
		expect((await invoiceOf(discarded.id)).number).toBeNull();
	});

	it("a read-only key cannot add lines or finalize (403), nothing changed", async () => {
		const { draft } = await computeInvoice();
		const readOnly = await createKey("read-only");
		expectError(
			await post(`/v1/invoices/${draft.id}/lines`, { description: "x", amount: 1 }, { key: readOnly }),
			403,
			"forbidden",
		);
		expectError(
			await post(`/v1/invoices/${draft.id}/finalize`, undefined, { key: readOnly }),
			403,
			"forbidden",
		);
		expect(await invoiceOf(draft.id)).toMatchObject({ status: "draft", amount: 10 });
		expect((await get(`/v1/invoices?status=draft`, { key: readOnly })).status).toBe(200);
	});

	it("a retried finalize answers the first again and emits invoice.created once", async () => {
		const { draft } = await computeInvoice();
		const headers = { "Idempotency-Key": `fin-${draft.id}` };
		const first = await post(`/v1/invoices/${draft.id}/finalize`, undefined, { headers });
		const again = await post(`/v1/invoices/${draft.id}/finalize`, undefined, { headers });
		expect(first.status).toBe(200);
		expect(again.status).toBe(200);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expect(await outboxEvents("invoice.created", draft.id)).toHaveLength(1);
	});

	it("a deduction line is billed once: late usage neither repeats nor reverses it", async () => {
		const plan = await createPlan({
			base_fee: 10,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: 1,
				},
			],
		});
		const account = await createAccount(undefined, { invoice_grace_days: 5 });
		const instance = instanceKey();
		await subscribe(account.id, plan.id, [instance]);
		await sendActions(actions(instance, "call", 2));
		const draft = (await generate(currentPeriod(), account.id)).invoices[0];
		expect(draft).toMatchObject({ status: "draft", amount: 12 });
		const deduction = await post(`/v1/invoices/${draft?.id}/lines`, { description: "Goodwill", amount: -5 });
		expect(deduction.body).toMatchObject({ amount: 7 });
		// Late usage while a draft: the draft is updated, the deduction kept once.
		await sendActions(actions(instance, "call", 3));
		await generate(currentPeriod(), account.id);
		expect(await invoiceOf(draft?.id as string)).toMatchObject({ status: "draft", amount: 10 });
		const issued = (await post(`/v1/invoices/${draft?.id}/finalize`)).body;
		expect(issued).toMatchObject({ status: "open", amount: 10 });
		// After it is issued: a supplementary invoice of the new calls alone.
		await sendActions(actions(instance, "call", 1));
		const { invoices } = await generate(currentPeriod(), account.id);
		expect(invoices).toHaveLength(1);
		expect(invoices[0]).toMatchObject({ kind: "supplementary", amount: 1 });
		expect(linesOf(invoices[0] as (typeof invoices)[number])).toEqual([["calls", 1, 1]]);
	});

	it("a retried one-off line is added once", async () => {
		const { draft } = await computeInvoice();
		const headers = { "Idempotency-Key": `line-${draft.id}` };
		const body = { description: "Setup", amount: 5 };
		const first = await post(`/v1/invoices/${draft.id}/lines`, body, { headers });
		const again = await post(`/v1/invoices/${draft.id}/lines`, body, { headers });
		expect(first.status).toBe(201);
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expect((await invoiceOf(draft.id)).amount).toBe(15);
		const { n } = (await env.DB.prepare("SELECT COUNT(*) AS n FROM invoices WHERE id = ?1")
			.bind(draft.id)
			.first()) as { n: number };
		expect(n).toBe(1);
	});
});
