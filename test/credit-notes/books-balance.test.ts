import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { createAccount, createKey, get, post } from "../helpers";
import { createPlan, currentPeriod, type Invoice, instanceKey, subscribe } from "../invoicing/fixtures";
import type { CreditNote } from "./fixtures";

// The books balance (docs/credit-notes.md), whatever sequence of invoices, payments, credit notes, grants and
// voids an account goes through. Over its invoices that are not void:
//   invoiced − credited = paid (refunds negative) + credits used (net of credit given back) + amount remaining
// and nothing goes negative: amount due, amount remaining, what a grant has left; a credit note never takes more
// than its invoice's amount.
const operation = fc.oneof(
	fc.record({ kind: fc.constant("invoice" as const), cents: fc.integer({ min: 0, max: 20_000 }) }),
	fc.record({ kind: fc.constant("grant" as const), cents: fc.integer({ min: 1, max: 15_000 }) }),
	fc.record({ kind: fc.constant("pay" as const), pick: fc.nat() }),
	fc.record({ kind: fc.constant("void" as const), pick: fc.nat() }),
	fc.record({
		kind: fc.constant("credit" as const),
		pick: fc.nat(),
		cents: fc.integer({ min: 1, max: 25_000 }),
		refund: fc.boolean(),
	}),
);

const d = (x: number) => Decimal.from(x);
const sum = (values: number[]) => Decimal.sum(values.map(d));

// A key of its own for each run: a run makes some 50 requests, all the runs many more than one key's rate limit
// of 1,000 a minute.
let key = "";

async function invoiceOf(accountId: string, cents: number): Promise<Invoice> {
	const plan = await createPlan({ base_fee: cents / 100, charges: [] }, key);
	await subscribe(accountId, plan.id, [instanceKey()], key);
	const response = await post(
		"/v1/invoices/generate",
		{ billing_period: currentPeriod(), account_id: accountId },
		{ key },
	);
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body.invoices[0] as Invoice;
}

describe("books balance (properties, in D1)", () => {
	it("invoiced − credited = paid + credits used + remaining, and nothing goes negative", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), async (operations) => {
				key = await createKey("admin");
				const account = await createAccount(key);
				const invoiceIds: string[] = [];
				const notes: CreditNote[] = [];
				let granted = Decimal.ZERO;
				for (const op of operations) {
					if (op.kind === "invoice") {
						invoiceIds.push((await invoiceOf(account.id, op.cents)).id);
						continue;
					}
					if (op.kind === "grant") {
						const grant = await post(
							`/v1/accounts/${account.id}/credit-grants`,
							{ amount: op.cents / 100 },
							{ key },
						);
						expect(grant.status).toBe(201);
						granted = granted.add(d(op.cents / 100));
						continue;
					}
					if (invoiceIds.length === 0) continue;
					const id = invoiceIds[op.pick % invoiceIds.length] as string;
					const before = (await get(`/v1/invoices/${id}`, { key })).body as Invoice & {
						amount_credited: number;
					};
					if (op.kind === "pay") {
						const paid = await post(`/v1/invoices/${id}/pay`, {}, { key });
						expect(paid.status).toBe(before.status === "open" ? 200 : 409);
					} else if (op.kind === "void") {
						const voided = await post(`/v1/invoices/${id}/void`, undefined, { key });
						const allowed =
							before.status === "void" || (before.status === "open" && before.amount_credited === 0);
						expect(voided.status, JSON.stringify(voided.body)).toBe(allowed ? 200 : 409);
					} else {
						const amount = op.cents / 100;
						const creditable = d(before.amount).sub(d(before.amount_credited));
						const fits = before.status !== "void" && d(amount).lte(creditable);
						const response = await post(
							`/v1/invoices/${id}/credit-notes`,
							{
								amount,
								reason: "other",
								refund: op.refund,
							},
							{ key },
						);
						expect(response.status, JSON.stringify(response.body)).toBe(fits ? 201 : 409);
						if (fits) notes.push(response.body as CreditNote);
					}
				}

				const invoices = (await get(`/v1/invoices?account_id=${account.id}&limit=100`, { key })).body
					.invoices as (Invoice & { amount_credited: number })[];
				const live = invoices.filter((invoice) => invoice.status !== "void");
				const creditNotes = (await get(`/v1/credit-notes?account_id=${account.id}&limit=100`, { key })).body
					.credit_notes as CreditNote[];
				expect(creditNotes).toHaveLength(notes.length);
				const givenBack = sum(creditNotes.map((note) => note.applied.credited));
				const invoiced = sum(live.map((i) => i.amount));
				const credited = sum(live.map((i) => i.amount_credited));
				const paid = sum(live.map((i) => i.amount_paid));
				const creditsUsed = sum(live.map((i) => i.credits_applied)).sub(givenBack);
				const remaining = sum(live.map((i) => i.amount_remaining));
				expect(invoiced.sub(credited).toString()).toBe(paid.add(creditsUsed).add(remaining).toString());

				for (const invoice of invoices) {
					for (const figure of [
						"amount_due",
						"amount_paid",
						"amount_remaining",
						"amount_credited",
					] as const) {
						expect(invoice[figure], `${figure} of ${JSON.stringify(invoice)}`).toBeGreaterThanOrEqual(0);
					}
					expect(d(invoice.amount_credited).lte(d(invoice.amount))).toBe(true);
					const notesOf = creditNotes.filter((note) => note.invoice_id === invoice.id);
					expect(sum(notesOf.map((note) => note.amount)).toString()).toBe(
						d(invoice.amount_credited).toString(),
					);
					for (const note of notesOf) {
						const { to_invoice, refunded, credited: back } = note.applied;
						expect(sum([to_invoice, refunded, back]).toString()).toBe(d(note.amount).toString());
					}
				}
				// What was granted, by hand or by credit notes, is either still held or paid live invoices.
				const grants = (await get(`/v1/accounts/${account.id}/credit-grants?limit=100`, { key })).body
					.credit_grants as {
					remaining: number;
				}[];
				for (const grant of grants) expect(grant.remaining).toBeGreaterThanOrEqual(0);
				expect(granted.add(givenBack).toString()).toBe(
					sum(grants.map((g) => g.remaining))
						.add(sum(live.map((i) => i.credits_applied)))
						.toString(),
				);
			}),
			{ numRuns: 30 },
		);
	});
});
