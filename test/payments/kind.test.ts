import { describe, expect, it } from "vitest";
import { creditNote, paidInvoice } from "../credit-notes/fixtures";
import { call, get, post } from "../helpers";
import { outboxEvents } from "../invoicing/fixtures";
import { mint, portalGet } from "../portal/fixtures";

// Every view of a payment says whether it is a payment or a refund made by a credit note (docs/credit-notes.md).

async function refundedInvoice() {
	const invoice = await paidInvoice(100);
	const note = await creditNote(invoice.id, { amount: 25.5, reason: "duplicate", refund: true });
	return { invoice, note };
}

describe("payment kind", () => {
	it("GET /v1/payments lists the payment as payment and the refund as refund", async () => {
		const { invoice, note } = await refundedInvoice();
		const { body } = await get(`/v1/payments?invoice_id=${invoice.id}`);
		expect(body.total).toBe(2);
		const byKind = Object.fromEntries(body.payments.map((p: { kind: string }) => [p.kind, p]));
		expect(byKind.payment).toMatchObject({ kind: "payment", amount: 100, invoice_id: invoice.id });
		expect(byKind.refund).toMatchObject({ kind: "refund", amount: -25.5, reference: note.number });
	});

	it("an invoice's payments carry their kind, oldest first", async () => {
		const { invoice, note } = await refundedInvoice();
		const { body } = await get(`/v1/invoices/${invoice.id}`);
		expect(body.payments).toEqual([
			expect.objectContaining({ kind: "payment", amount: 100 }),
			expect.objectContaining({ kind: "refund", amount: -25.5, reference: note.number }),
		]);
		const listed = await get(`/v1/invoices?account_id=${invoice.account_id}`);
		expect(listed.body.invoices[0].payments.map((p: { kind: string }) => p.kind)).toEqual([
			"payment",
			"refund",
		]);
	});

	it("payment.successful says kind payment", async () => {
		const { invoice } = await refundedInvoice();
		const [event] = await outboxEvents("payment.successful", invoice.id);
		expect(event?.data).toMatchObject({ kind: "payment", amount: 100, invoice_id: invoice.id });
	});

	it("the portal's payments carry their kind", async () => {
		const { invoice } = await refundedInvoice();
		const session = await mint(invoice.account_id);
		const { status, body } = await portalGet("/payments", session.token);
		expect(status).toBe(200);
		expect(body.payments.map((p: { kind: string }) => p.kind).sort()).toEqual(["payment", "refund"]);
	});

	it("MCP's list_invoices shows the kinds through the same route", async () => {
		const { invoice } = await refundedInvoice();
		const response = await call("POST", "/mcp", {
			body: {
				jsonrpc: "2.0",
				id: 1,
				method: "tools/call",
				params: { name: "list_invoices", arguments: { account_id: invoice.account_id } },
			},
			headers: { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" },
		});
		expect(response.status).toBe(200);
		const listed = JSON.parse(response.body.result.content[0].text);
		expect(listed.invoices[0].payments.map((p: { kind: string }) => p.kind)).toEqual(["payment", "refund"]);
	});

	it("the OpenAPI document names the kinds", async () => {
		const { body } = await get("/v1/openapi.json");
		const expected = { type: "string", enum: ["payment", "refund"] };
		expect(body.components.schemas.Payment.properties.kind).toMatchObject(expected);
		expect(body.components.schemas.InvoicePayment.properties.kind).toMatchObject(expected);
		expect(body.components.schemas.Payment.required).toContain("kind");
		expect(body.components.schemas.PaymentSuccessfulData.properties.kind).toMatchObject({
			enum: ["payment"],
		});
	});
});

void post;
