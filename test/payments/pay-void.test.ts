import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import {
	actions,
	currentPeriod,
	customer,
	generateOne,
	MANUAL_COLLECTION,
	outboxEvents,
	sendActions,
} from "../invoicing/fixtures";

// Paying and voiding (§10): only an open invoice changes state; paying records a payment and emits
// invoice.paid then payment.successful in the same batch.
const plan = {
	base_fee: 12.5,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.1,
		},
	],
};

/** A fresh open invoice of 12.50 + 3 calls × 0.10 = 12.80. */
async function openInvoice() {
	const { account, instances } = await customer(plan);
	await sendActions(actions(instances[0] as string, "call", 3));
	const invoice = await generateOne(currentPeriod(), account.id);
	expect(invoice.amount).toBe(12.8);
	return invoice;
}

async function paymentsOf(invoiceId: string) {
	const { results } = await env.DB.prepare("SELECT * FROM payments WHERE invoice_id = ?1")
		.bind(invoiceId)
		.all();
	return results;
}

async function storedStatus(invoiceId: string) {
	return env.DB.prepare("SELECT status, paid_at, voided_at FROM invoices WHERE id = ?1")
		.bind(invoiceId)
		.first();
}

describe("POST /v1/invoices/{invoice_id}/pay", () => {
	it("marks the invoice paid, records the payment and emits invoice.paid then payment.successful", async () => {
		const invoice = await openInvoice();
		const response = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-2026-0042" });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const paidAt = response.body.paid_at as string;
		expect(response.body).toEqual({
			...invoice,
			status: "paid",
			paid_at: expect.stringMatching(/Z$/),
			amount_paid: 12.8,
			amount_remaining: 0,
			payments: [
				{
					id: expect.stringMatching(/^pay_/),
					kind: "payment",
					amount: 12.8,
					reference: "wire-2026-0042",
					provider: "manual",
					paid_at: response.body.paid_at,
				},
			],
		});
		expect(await storedStatus(invoice.id)).toEqual({ status: "paid", paid_at: paidAt, voided_at: null });

		const [payment, ...others] = await paymentsOf(invoice.id);
		expect(others).toEqual([]);
		expect(payment).toMatchObject({
			id: expect.stringMatching(/^pay_[0-9a-z]{26}$/),
			environment: "live",
			amount: "12.8",
			currency: "USD",
			reference: "wire-2026-0042",
			created_at: paidAt,
			account_id: invoice.account_id,
		});

		const { results } = await env.DB.prepare(
			"SELECT event, data FROM webhook_events WHERE event IN ('invoice.paid', 'payment.successful') AND json_extract(data, '$.invoice_id') = ?1 ORDER BY created_at, id",
		)
			.bind(invoice.id)
			.all<{ event: string; data: string }>();
		expect(results.map((row) => [row.event, JSON.parse(row.data)])).toEqual([
			[
				"invoice.paid",
				{
					invoice_id: invoice.id,
					account_id: invoice.account_id,
					subscription_id: invoice.subscription_id,
					billing_period: invoice.billing_period,
					amount: 12.8,
					currency: "USD",
					status: "paid",
					paid_at: paidAt,
					collection: MANUAL_COLLECTION,
				},
			],
			[
				"payment.successful",
				{
					payment_id: payment?.id,
					invoice_id: invoice.id,
					account_id: invoice.account_id,
					amount: 12.8,
					currency: "USD",
					kind: "payment",
					paid_at: paidAt,
				},
			],
		]);
	});

	it("accepts a request without a body", async () => {
		const invoice = await openInvoice();
		const response = await post(`/v1/invoices/${invoice.id}/pay`);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect((await paymentsOf(invoice.id))[0]).toMatchObject({ reference: null });
	});

	it("refuses to pay a paid invoice with 409 and changes nothing", async () => {
		const invoice = await openInvoice();
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, {});
		expectError(await post(`/v1/invoices/${invoice.id}/pay`, {}), 409, "conflict");
		expect(await paymentsOf(invoice.id)).toHaveLength(1);
		expect(await outboxEvents("invoice.paid", invoice.id)).toHaveLength(1);
		expect((await get(`/v1/invoices/${invoice.id}`)).body).toEqual(paid.body);
	});

	it("pays an invoice once when payments race", async () => {
		const invoice = await openInvoice();
		const responses = await Promise.all(
			Array.from({ length: 5 }, () => post(`/v1/invoices/${invoice.id}/pay`)),
		);
		expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
		expect(await paymentsOf(invoice.id)).toHaveLength(1);
		expect(await outboxEvents("payment.successful", invoice.id)).toHaveLength(1);
	});

	it("refuses to pay a void invoice with 409", async () => {
		const invoice = await openInvoice();
		await post(`/v1/invoices/${invoice.id}/void`);
		expectError(await post(`/v1/invoices/${invoice.id}/pay`), 409, "conflict");
		expect(await paymentsOf(invoice.id)).toEqual([]);
		expect(await storedStatus(invoice.id)).toMatchObject({ status: "void", paid_at: null });
		expect(await outboxEvents("invoice.paid", invoice.id)).toEqual([]);
	});

	it.each([
		[{ reference: "" }, "reference"],
		[{ reference: 42 }, "reference"],
		[{ amount: 1 }, "amount"],
	])("rejects %j with 400", async (body, path) => {
		const invoice = await openInvoice();
		const error = expectError(await post(`/v1/invoices/${invoice.id}/pay`, body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
		expect(await storedStatus(invoice.id)).toMatchObject({ status: "open" });
	});

	it("answers 404 for an unknown invoice and 403 to a read-only key", async () => {
		expectError(await post("/v1/invoices/inv_unknown/pay"), 404, "not_found");
		const invoice = await openInvoice();
		const readOnly = await createKey("read-only");
		expectError(await post(`/v1/invoices/${invoice.id}/pay`, {}, { key: readOnly }), 403, "forbidden");
	});
});

describe("POST /v1/invoices/{invoice_id}/void", () => {
	it("voids an open invoice; voiding again answers it unchanged", async () => {
		const invoice = await openInvoice();
		const response = await post(`/v1/invoices/${invoice.id}/void`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual({ ...invoice, status: "void", voided_at: expect.stringMatching(/Z$/) });
		expect(await storedStatus(invoice.id)).toEqual({
			status: "void",
			paid_at: null,
			voided_at: response.body.voided_at,
		});
		const again = await post(`/v1/invoices/${invoice.id}/void`);
		expect(again.status).toBe(200);
		expect(again.body).toEqual(response.body);
	});

	it("refuses to void a paid invoice with 409", async () => {
		const invoice = await openInvoice();
		await post(`/v1/invoices/${invoice.id}/pay`);
		expectError(await post(`/v1/invoices/${invoice.id}/void`), 409, "conflict");
		expect(await storedStatus(invoice.id)).toMatchObject({ status: "paid", voided_at: null });
	});

	it("answers 404 for an unknown invoice", async () => {
		expectError(await post("/v1/invoices/inv_unknown/void"), 404, "not_found");
	});

	it("lets the period be invoiced again: a void invoice no longer counts as billed", async () => {
		const invoice = await openInvoice();
		await post(`/v1/invoices/${invoice.id}/void`);
		const replacement = await generateOne(currentPeriod(), invoice.account_id);
		// the same 12.80, as a new regular invoice with the next number
		expect(replacement).toMatchObject({ kind: "regular", amount: 12.8, status: "open" });
		expect(replacement.line_items).toEqual(invoice.line_items);
		expect(replacement.id).not.toBe(invoice.id);
	});
});
