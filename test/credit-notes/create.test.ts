import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import {
	createPlan,
	currentPeriod,
	generate,
	type Invoice,
	instanceKey,
	outboxEvents,
	subscribe,
} from "../invoicing/fixtures";
import {
	creditNote,
	grantsOf,
	openInvoice,
	paidInvoice,
	storedCreditNotes,
	storedPayments,
} from "./fixtures";

// Credit notes (docs/credit-notes.md): off what is still due first, the rest refunded or given back as credit.

describe("POST /v1/invoices/{invoice_id}/credit-notes on an open invoice", () => {
	it("takes a partial credit off the amount due and leaves the invoice open", async () => {
		const invoice = await openInvoice(100);
		const note = await creditNote(invoice.id, { amount: 30, reason: "billing_error", memo: "Wrong seats" });
		expect(note).toEqual({
			id: expect.stringMatching(/^cn_[0-9a-z]{26}$/),
			number: expect.stringMatching(/^CN-\d{6}$/),
			invoice_id: invoice.id,
			account_id: invoice.account_id,
			currency: "USD",
			amount: 30,
			reason: "billing_error",
			memo: "Wrong seats",
			lines: [{ description: `Credit on invoice ${invoice.number}`, amount: 30 }],
			applied: { to_invoice: 30, refunded: 0, credited: 0 },
			created_at: expect.stringMatching(/Z$/),
		});
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after).toMatchObject({
			status: "open",
			amount: 100,
			amount_due: 70,
			amount_paid: 0,
			amount_remaining: 70,
			amount_credited: 30,
			credit_notes: [note.id],
			payments: [],
		});
		expect(await storedPayments(invoice.id)).toEqual([]);
		expect(await grantsOf(invoice.account_id)).toEqual([]);
		const [created] = await outboxEvents("credit_note.created", invoice.id);
		expect(created?.data).toEqual({
			credit_note_id: note.id,
			invoice_id: invoice.id,
			account_id: invoice.account_id,
			amount: 30,
			currency: "USD",
		});

		// Paying it then pays what is left.
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, {});
		expect(paid.status).toBe(200);
		expect(paid.body).toMatchObject({ status: "paid", amount_due: 70, amount_paid: 70, amount_remaining: 0 });
	});

	it("a full credit leaves nothing due: the invoice is paid, with no payment, and invoice.paid is emitted", async () => {
		const invoice = await openInvoice(100);
		const note = await creditNote(invoice.id, {
			lines: [
				{ description: "Duplicate base fee", amount: 60 },
				{ description: "Goodwill", amount: 40 },
			],
			reason: "duplicate",
		});
		expect(note).toMatchObject({
			amount: 100,
			memo: null,
			lines: [
				{ description: "Duplicate base fee", amount: 60 },
				{ description: "Goodwill", amount: 40 },
			],
			applied: { to_invoice: 100, refunded: 0, credited: 0 },
		});
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after).toMatchObject({
			status: "paid",
			paid_at: note.created_at,
			amount_due: 0,
			amount_paid: 0,
			amount_remaining: 0,
			amount_credited: 100,
			payments: [],
		});
		const paidEvents = await outboxEvents("invoice.paid", invoice.id);
		expect(paidEvents.map((e) => e.data.status)).toEqual(["paid"]);
		// Nothing is left to credit.
		const more = await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 0.01, reason: "other" });
		expectError(more, 409, "conflict");
	});

	it("beyond what is due, the rest is given back as a credit grant named after the credit note", async () => {
		const invoice = await openInvoice(100);
		await creditNote(invoice.id, { amount: 80, reason: "order_change" });
		// Paying the 20 left, then crediting 20 more: nothing unpaid, so all of it is credit.
		await post(`/v1/invoices/${invoice.id}/pay`, {});
		const note = await creditNote(invoice.id, { amount: 20, reason: "order_change" });
		expect(note.applied).toEqual({ to_invoice: 0, refunded: 0, credited: 20 });
		expect(await grantsOf(invoice.account_id)).toEqual([
			{ amount: "20", description: `Credit note ${note.number}`, remaining_minor: 2000 },
		]);
		const grants = (await get(`/v1/accounts/${invoice.account_id}/credit-grants`)).body.credit_grants;
		expect(grants).toMatchObject([
			{ amount: 20, remaining: 20, status: "active", description: `Credit note ${note.number}` },
		]);
	});
});

describe("POST /v1/invoices/{invoice_id}/credit-notes on a paid invoice", () => {
	it("refund: true records a refund payment with a negative amount", async () => {
		const invoice = await paidInvoice(100);
		const note = await creditNote(invoice.id, {
			amount: 25.5,
			reason: "product_unsatisfactory",
			refund: true,
		});
		expect(note.applied).toEqual({ to_invoice: 0, refunded: 25.5, credited: 0 });
		expect(await storedPayments(invoice.id)).toEqual([
			{ kind: "payment", amount: "100", reference: null },
			{ kind: "refund", amount: "-25.5", reference: note.number },
		]);
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after).toMatchObject({
			status: "paid",
			amount_due: 100,
			amount_paid: 74.5,
			amount_remaining: 0,
			amount_credited: 25.5,
		});
		expect(after.payments.map((p: { amount: number }) => p.amount)).toEqual([100, -25.5]);
		expect(await grantsOf(invoice.account_id)).toEqual([]);
		const listed = (await get(`/v1/payments?invoice_id=${invoice.id}`)).body.payments;
		expect(listed.map((p: { amount: number }) => p.amount).sort()).toEqual([-25.5, 100]);
	});

	it("refunds only money paid: what prepaid credits covered goes back as credit even with refund: true", async () => {
		const invoice = await openInvoice(100);
		// A second invoice of the same account, 40 of it paid by a grant made after the first.
		await post(`/v1/accounts/${invoice.account_id}/credit-grants`, { amount: 40 });
		const plan = await createPlan({ base_fee: 100, charges: [] });
		await subscribe(invoice.account_id, plan.id, [instanceKey()]);
		const second = (await generate(currentPeriod(), invoice.account_id)).invoices[0] as Invoice;
		expect(second).toMatchObject({ credits_applied: 40, amount_due: 60, status: "open" });
		const note = await creditNote(second.id, { amount: 80, reason: "other", refund: true });
		// 60 off what was due; the 20 credits covered cannot be refunded as money: they go back as credit.
		expect(note.applied).toEqual({ to_invoice: 60, refunded: 0, credited: 20 });
		expect(await storedPayments(second.id)).toEqual([]);
		expect((await get(`/v1/invoices/${second.id}`)).body).toMatchObject({
			status: "paid",
			amount_paid: 0,
			amount_due: 0,
			amount_remaining: 0,
		});
	});

	it("by default the amount is given back as credit, which pays the account's next invoice", async () => {
		const invoice = await paidInvoice(100);
		const note = await creditNote(invoice.id, { amount: 100, reason: "fraudulent" });
		expect(note.applied).toEqual({ to_invoice: 0, refunded: 0, credited: 100 });
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after).toMatchObject({
			status: "paid",
			amount_paid: 100,
			amount_remaining: 0,
			amount_credited: 100,
		});
		const balance = (await get(`/v1/accounts/${invoice.account_id}/balance`)).body;
		expect(balance.available).toBe(100);
	});

	it("numbers are sequential per environment", async () => {
		const invoice = await paidInvoice(100);
		const a = await creditNote(invoice.id, { amount: 1, reason: "other" });
		const b = await creditNote(invoice.id, { amount: 1, reason: "other" });
		expect(Number(b.number.slice(3))).toBe(Number(a.number.slice(3)) + 1);

		const testKey = await createKey("admin", "test");
		const testInvoice = await openInvoice(10, testKey);
		const first = await creditNote(testInvoice.id, { amount: 1, reason: "other" }, testKey);
		const { n } = (await env.DB.prepare(
			"SELECT COUNT(*) AS n FROM credit_notes WHERE environment = 'test'",
		).first()) as {
			n: number;
		};
		expect(first.number).toBe(`CN-${String(n).padStart(6, "0")}`);
		// The other environment's credit note is not found here.
		expectError(await get(`/v1/credit-notes/${first.id}`), 404, "not_found");
	});
});

describe("POST /v1/invoices/{invoice_id}/credit-notes refusals", () => {
	it.each([
		["both amount and lines", { amount: 1, lines: [{ description: "x", amount: 1 }], reason: "other" }],
		["neither amount nor lines", { reason: "other" }],
		["a zero amount", { amount: 0, reason: "other" }],
		["a negative amount", { amount: -5, reason: "other" }],
		["a zero line", { lines: [{ description: "x", amount: 0 }], reason: "other" }],
		["no lines", { lines: [], reason: "other" }],
		["an unknown reason", { amount: 1, reason: "because" }],
		["no reason", { amount: 1 }],
		["an unknown field", { amount: 1, reason: "other", status: "void" }],
		["more decimals than the currency has", { amount: 1.005, reason: "other" }],
	])("400 for %s, nothing stored", async (_, body) => {
		const invoice = await openInvoice(100);
		const response = await post(`/v1/invoices/${invoice.id}/credit-notes`, body);
		expectError(response, 400, "validation_error");
		expect(await storedCreditNotes(invoice.id)).toEqual([]);
		expect((await get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({
			amount_due: 100,
			amount_credited: 0,
		});
	});

	it("409 for more than the invoice's amount minus earlier credit notes, nothing stored", async () => {
		const invoice = await openInvoice(100);
		expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 100.01, reason: "other" }),
			409,
			"conflict",
		);
		await creditNote(invoice.id, { amount: 60, reason: "other" });
		const error = expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 40.01, reason: "other" }),
			409,
			"conflict",
		);
		expect(error.message).toContain("40");
		expect(await storedCreditNotes(invoice.id)).toHaveLength(1);
	});

	it("409 on a void invoice; 404 for an unknown invoice; 403 for a read-only key", async () => {
		const invoice = await openInvoice(100);
		expect((await post(`/v1/invoices/${invoice.id}/void`)).status).toBe(200);
		expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 1, reason: "other" }),
			409,
			"conflict",
		);
		expectError(
			await post("/v1/invoices/inv_01jd0000000000000000000000/credit-notes", { amount: 1, reason: "other" }),
			404,
			"not_found",
		);
		const readOnly = await createKey("read-only");
		const other = await openInvoice(100);
		expectError(
			await post(`/v1/invoices/${other.id}/credit-notes`, { amount: 1, reason: "other" }, { key: readOnly }),
			403,
			"forbidden",
		);
		expect(await storedCreditNotes(invoice.id)).toEqual([]);
	});

	it("an invoice with credit notes cannot be voided (409)", async () => {
		const invoice = await openInvoice(100);
		await creditNote(invoice.id, { amount: 10, reason: "other" });
		expectError(await post(`/v1/invoices/${invoice.id}/void`), 409, "conflict");
		expect((await get(`/v1/invoices/${invoice.id}`)).body.status).toBe("open");
	});
});

describe("concurrent credit notes", () => {
	it("30 at once never take more than the invoice's amount", async () => {
		const invoice = await openInvoice(100);
		const responses = await Promise.all(
			Array.from({ length: 30 }, () =>
				post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 7, reason: "billing_error" }),
			),
		);
		const statuses = responses.map((r) => r.status).sort();
		// 14 × 7 = 98 fit in 100; the 16 others are refused.
		expect(statuses.filter((s) => s === 201)).toHaveLength(14);
		expect(statuses.filter((s) => s === 409)).toHaveLength(16);
		const notes = await storedCreditNotes(invoice.id);
		expect(notes).toHaveLength(14);
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after).toMatchObject({ amount_credited: 98, amount_due: 2, status: "open" });
		const numbers = notes.map((n) => n.number as number);
		expect(new Set(numbers).size).toBe(14);
	});
});

describe("credit notes racing a payment", () => {
	it("never pays what a credit note took off, nor credits beyond the invoice", async () => {
		const invoice = await openInvoice(100);
		const [pay, ...notes] = await Promise.all([
			post(`/v1/invoices/${invoice.id}/pay`, {}),
			...Array.from({ length: 6 }, () =>
				post(`/v1/invoices/${invoice.id}/credit-notes`, { amount: 10, reason: "other" }),
			),
		]);
		expect([200, 409]).toContain(pay?.status);
		expect(notes.every((note) => note.status === 201)).toBe(true);
		const after = (await get(`/v1/invoices/${invoice.id}`)).body;
		expect(after.amount_credited).toBe(60);
		const stored = await storedCreditNotes(invoice.id);
		const toInvoice = stored.reduce((sum, note) => sum + Number(note.to_invoice), 0);
		const credited = stored.reduce((sum, note) => sum + Number(note.credited), 0);
		// What the payment paid and what credit notes took off add up to the amount, once each.
		const paid = after.payments.reduce((sum: number, p: { amount: number }) => sum + p.amount, 0);
		expect(paid + toInvoice + after.amount_remaining).toBe(100);
		expect(toInvoice + credited).toBe(60);
		if (pay?.status === 200) expect(after.status).toBe("paid");
	});
});

describe("Idempotency-Key on credit notes", () => {
	it("a retried request answers the first credit note again and stores one", async () => {
		const invoice = await openInvoice(100);
		const body = { amount: 12, reason: "billing_error" };
		const headers = { "Idempotency-Key": `cn-${invoice.id}` };
		const first = await post(`/v1/invoices/${invoice.id}/credit-notes`, body, { headers });
		const again = await post(`/v1/invoices/${invoice.id}/credit-notes`, body, { headers });
		expect(first.status).toBe(201);
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expect(await storedCreditNotes(invoice.id)).toHaveLength(1);
		expectError(
			await post(`/v1/invoices/${invoice.id}/credit-notes`, { ...body, amount: 13 }, { headers }),
			409,
			"idempotency_key_reused",
		);
	});
});
