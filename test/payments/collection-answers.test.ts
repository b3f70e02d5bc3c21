/**
 * The collection an answer or a webhook shows is the one stored with the invoice at that moment: an invoice of a
 * Stripe account is answered `pending` by the request that issued it (not `manual`/`none`), and every invoice.*
 * event carries the same `collection` object as GET /v1/invoices/{id}.
 */
import { it } from "vitest";
import { patch, post } from "../helpers";
import { currentPeriod, customer, generateOne, outboxEvents } from "../invoicing/fixtures";
import { asked, invoiceNow, stripeInvoice, testKey } from "./fixtures";
import { deliverStripeEvent, describeWithStripe, expect, stripeEvent } from "./stripe";

const PENDING = {
	provider: "stripe",
	status: "pending",
	attempts: 0,
	next_attempt_at: null,
	payment_intent_id: null,
	checkout_session_id: null,
	payment_url: null,
	last_error: null,
};

async function eventData(kind: string, invoiceId: string) {
	const events = await outboxEvents(kind, invoiceId);
	expect(events, `${kind} of ${invoiceId}`).toHaveLength(1);
	return events[0]?.data as Record<string, any>;
}

describeWithStripe("the collection shown as an invoice is issued", () => {
	it("generate answers the collection stored with the invoice, as GET shows it", async () => {
		const { invoice } = await stripeInvoice({ baseFee: 80 });
		// Answered before Stripe was asked: pending, nothing made at Stripe yet.
		expect(invoice.collection).toEqual(PENDING);
		const stored = await invoiceNow(invoice.id);
		expect(stored.collection).toMatchObject({ provider: "stripe", status: "pending", attempts: 0 });
		expect((await eventData("invoice.created", invoice.id)).collection).toEqual(PENDING);
	});

	it("finalize answers the collection stored with the invoice it issued", async () => {
		const { key, invoice } = await stripeInvoice({
			baseFee: 60,
			beforeIssue: async (account) => {
				const drafts = await patch(
					`/v1/accounts/${account.id}`,
					{ invoice_grace_days: 3 },
					{ key: await testKey() },
				);
				expect(drafts.status, JSON.stringify(drafts.body)).toBe(200);
			},
		});
		expect(invoice.status).toBe("draft");
		expect(invoice.collection).toMatchObject({ provider: "manual", status: "none" });
		const finalized = await post(`/v1/invoices/${invoice.id}/finalize`, {}, { key });
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body.collection).toEqual(PENDING);
		expect((await eventData("invoice.created", invoice.id)).collection).toEqual(PENDING);
	});
});

describeWithStripe("invoice.* webhooks carry the invoice's collection", () => {
	it("a manual account's invoice: provider manual, status none", async () => {
		const key = await testKey();
		const { account } = await customer({ base_fee: 10, charges: [] }, { key });
		const invoice = await generateOne(currentPeriod(), account.id, key);
		expect((await eventData("invoice.created", invoice.id)).collection).toEqual({
			...PENDING,
			provider: "manual",
			status: "none",
		});
		expect((await post(`/v1/invoices/${invoice.id}/pay`, {}, { key })).status).toBe(200);
		expect((await eventData("invoice.paid", invoice.id)).collection).toEqual(
			(await invoiceNow(invoice.id)).collection,
		);
	});

	it("paid through Stripe: invoice.paid shows the collection succeeded", async () => {
		const { invoice } = await stripeInvoice({ baseFee: 42 });
		const { collection } = await asked(invoice.id);
		const succeeded = stripeEvent("payment_intent.succeeded", {
			id: collection.payment_intent_id,
			object: "payment_intent",
			amount: 4200,
			amount_received: 4200,
			currency: "usd",
			metadata: { invoice_id: invoice.id },
		});
		expect((await deliverStripeEvent(succeeded)).status).toBe(200);
		const paid = await invoiceNow(invoice.id);
		expect(paid.collection).toMatchObject({ status: "succeeded" });
		expect((await eventData("invoice.paid", invoice.id)).collection).toEqual(paid.collection);
	});

	it("voided while Stripe was asked: invoice.voided shows the collection canceled", async () => {
		const { key, invoice } = await stripeInvoice({ paymentMethod: null });
		const before = await asked(invoice.id);
		const voided = await post(`/v1/invoices/${invoice.id}/void`, {}, { key });
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		const data = await eventData("invoice.voided", invoice.id);
		expect(data.collection).toEqual({ ...before.collection, status: "canceled" });
		expect(data.collection).toEqual(voided.body.collection);
	});
});
