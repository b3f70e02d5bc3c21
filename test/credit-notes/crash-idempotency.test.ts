import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";
import { outboxEvents } from "../invoicing/fixtures";
import { crashBeforeAnswer, idempotencyRecord } from "../support/crash-before-answer";
import { grantsOf, paidInvoice, storedCreditNotes, storedPayments } from "./fixtures";

// §37 on §14: a credit note and its Idempotency-Key's answer commit together. A Worker killed after the note's
// batch, before its answer was stored, leaves the key committed: the repeat answers that note, and issues none.

describe("a credit note whose Worker died before its answer was stored", () => {
	it("with refund: the repeat answers the same note, and there is one note and one refund", async () => {
		const invoice = await paidInvoice(100);
		const path = `/v1/invoices/${invoice.id}/credit-notes`;
		const body = { amount: 25.5, reason: "duplicate", refund: true };
		const headers = { "Idempotency-Key": "cn-refund-crash" };
		const { repeat } = await crashBeforeAnswer(path, () => post(path, body, { headers }));

		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		const notes = await storedCreditNotes(invoice.id);
		expect(notes).toHaveLength(1);
		expect(repeat.body).toEqual((await get(`/v1/credit-notes/${notes[0]?.id}`)).body);
		expect(repeat.body).toMatchObject({
			amount: 25.5,
			applied: { to_invoice: 0, refunded: 25.5, credited: 0 },
		});
		expect(await storedPayments(invoice.id)).toEqual([
			{ kind: "payment", amount: "100", reference: null },
			{ kind: "refund", amount: "-25.5", reference: repeat.body.number },
		]);
		expect(await outboxEvents("credit_note.created", invoice.id)).toHaveLength(1);

		// The answer is now stored: a third request gets it byte for byte.
		expect(await idempotencyRecord(path, "cn-refund-crash")).toMatchObject({
			state: "completed",
			status_code: 201,
		});
		const third = await post(path, body, { headers });
		expect(third.status).toBe(201);
		expect(third.body).toEqual(repeat.body);
		expect(await storedCreditNotes(invoice.id)).toHaveLength(1);
	});

	it("given back as credit: one note, one grant", async () => {
		const invoice = await paidInvoice(80);
		const path = `/v1/invoices/${invoice.id}/credit-notes`;
		const body = { lines: [{ description: "Seats", amount: 30 }], reason: "order_change" };
		const headers = { "Idempotency-Key": "cn-credit-crash" };
		const { repeat } = await crashBeforeAnswer(path, () => post(path, body, { headers }));
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(await storedCreditNotes(invoice.id)).toHaveLength(1);
		expect(await grantsOf(invoice.account_id)).toEqual([
			{ amount: "30", description: `Credit note ${repeat.body.number}`, remaining_minor: 3000 },
		]);
		expect((await get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ amount_credited: 30 });
	});
});
