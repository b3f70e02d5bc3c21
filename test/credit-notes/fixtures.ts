import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_KEY, post } from "../helpers";
import { currentPeriod, customer, generateOne, type Invoice } from "../invoicing/fixtures";

/** A fresh open invoice of `baseFee` (a plan with only a base fee), its account new. */
export async function openInvoice(baseFee = 100, key: string = ADMIN_KEY): Promise<Invoice> {
	const { account } = await customer({ base_fee: baseFee, charges: [] }, { key });
	return generateOne(currentPeriod(), account.id, key);
}

export async function paidInvoice(baseFee = 100): Promise<Invoice> {
	const invoice = await openInvoice(baseFee);
	const response = await post(`/v1/invoices/${invoice.id}/pay`, {});
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as Invoice;
}

export async function creditNote(invoiceId: string, body: Record<string, unknown>, key: string = ADMIN_KEY) {
	const response = await post(`/v1/invoices/${invoiceId}/credit-notes`, body, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as CreditNote;
}

export interface CreditNote {
	id: string;
	number: string;
	invoice_id: string;
	account_id: string;
	currency: string;
	amount: number;
	reason: string;
	memo: string | null;
	lines: { description: string; amount: number }[];
	applied: { to_invoice: number; refunded: number; credited: number };
	created_at: string;
}

export async function storedCreditNotes(invoiceId: string) {
	const { results } = await env.DB.prepare("SELECT * FROM credit_notes WHERE invoice_id = ?1 ORDER BY number")
		.bind(invoiceId)
		.all();
	return results;
}

export async function storedPayments(invoiceId: string) {
	const { results } = await env.DB.prepare(
		"SELECT kind, amount, reference FROM payments WHERE invoice_id = ?1 ORDER BY created_at, id",
	)
		.bind(invoiceId)
		.all();
	return results;
}

export async function grantsOf(accountId: string) {
	const { results } = await env.DB.prepare(
		`SELECT g.amount, g.description, (SELECT SUM(amount_minor) FROM credit_ledger l WHERE l.grant_id = g.id) AS remaining_minor
		FROM credit_grants g WHERE g.account_id = ?1 ORDER BY g.created_at, g.id`,
	)
		.bind(accountId)
		.all();
	return results;
}
