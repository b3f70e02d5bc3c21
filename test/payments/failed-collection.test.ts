/**
 * After a collection failed (every retry declined), the operator settles the invoice another way: paid by hand or
 * voided, its collection is canceled — the PaymentIntent canceled at Stripe, so the customer cannot pay it twice —
 * and an account blocked for the failed payment is no longer blocked.
 */
import { it } from "vitest";
import { get, post } from "../helpers";
import { asked, invoiceNow, storedCollection, stripeInvoice } from "./fixtures";
import {
	deliverStripeEvent,
	describeWithStripe,
	eventually,
	expect,
	sentToStripe,
	stripeEvent,
} from "./stripe";

/** Stripe declines every attempt the dunning schedule has (1 + 3 retries by default): the collection fails. */
async function failedCollection() {
	const setup = await stripeInvoice({ baseFee: 64, block: true });
	const { collection } = await asked(setup.invoice.id);
	const paymentIntent = collection.payment_intent_id as string;
	for (let attempt = 1; attempt <= 4; attempt++) {
		const declined = stripeEvent("payment_intent.payment_failed", {
			id: paymentIntent,
			object: "payment_intent",
			amount: 6400,
			currency: "usd",
			metadata: { invoice_id: setup.invoice.id },
			last_payment_error: { message: `Declined ${attempt}` },
		});
		expect((await deliverStripeEvent(declined)).status).toBe(200);
	}
	expect((await invoiceNow(setup.invoice.id)).collection).toMatchObject({ status: "failed", attempts: 4 });
	const entitlement = await get(`/v1/entitlements?agent_key=${setup.instances[0]}`, { key: setup.key });
	expect(entitlement.body).toMatchObject({ allowed: false, blocked_by: [setup.invoice.id] });
	return { ...setup, paymentIntent };
}

async function canceledAtStripe(invoiceId: string, paymentIntent: string) {
	await eventually(async () => {
		const cancels = (await sentToStripe(invoiceId)).filter(
			(r) => r.path === `/v1/payment_intents/${paymentIntent}/cancel`,
		);
		expect(cancels).toHaveLength(1);
		expect(cancels[0]?.headers["idempotency-key"]).toBe(`${invoiceId}:cancel:1`);
		expect(await storedCollection(invoiceId)).toMatchObject({
			collection_status: "canceled",
			collection_due: null,
		});
	});
}

describeWithStripe("a failed collection settled otherwise", () => {
	it("paid by hand: canceled at Stripe, and the account is no longer blocked", async () => {
		const { key, invoice, instances, paymentIntent } = await failedCollection();
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-77" }, { key });
		expect(paid.status, JSON.stringify(paid.body)).toBe(200);
		expect(paid.body.collection).toMatchObject({ status: "canceled", attempts: 4 });
		const entitlement = await get(`/v1/entitlements?agent_key=${instances[0]}`, { key });
		expect(entitlement.body).toMatchObject({ allowed: true, blocked_by: [] });
		await canceledAtStripe(invoice.id, paymentIntent);
	});

	it("voided: canceled at Stripe, and the account is no longer blocked", async () => {
		const { key, invoice, instances, paymentIntent } = await failedCollection();
		const voided = await post(`/v1/invoices/${invoice.id}/void`, {}, { key });
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(voided.body.collection.status).toBe("canceled");
		const entitlement = await get(`/v1/entitlements?agent_key=${instances[0]}`, { key });
		expect(entitlement.body).toMatchObject({ allowed: true, blocked_by: [] });
		await canceledAtStripe(invoice.id, paymentIntent);
	});
});
