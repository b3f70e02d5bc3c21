import { it } from "vitest";
import { post } from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";
import { asked, invoiceNow, storedCollection, stripeInvoice, testKey } from "./fixtures";
import { describeWithStripe, expect, sentToStripe } from "./stripe";

describeWithStripe("collection when an invoice is issued", () => {
	it("asks for a PaymentIntent with the saved payment method, in minor units, after the answer", async () => {
		const { account, invoice } = await stripeInvoice({ baseFee: 123.45 });
		const collected = await asked(invoice.id);
		expect(collected.collection).toMatchObject({
			provider: "stripe",
			status: "pending",
			attempts: 0,
			next_attempt_at: null,
			checkout_session_id: null,
			payment_url: null,
			last_error: null,
		});
		expect(collected.collection.payment_intent_id).toMatch(/^pi_/);
		const sent = await sentToStripe(`/v1/payment_intents `);
		const mine = sent.filter((r) => r.form.get("metadata[invoice_id]") === invoice.id);
		expect(mine).toHaveLength(1);
		const [request] = mine;
		expect(request?.headers["idempotency-key"]).toBe(`${invoice.id}:payment_intent:1`);
		expect(request?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
		expect(Object.fromEntries(request?.form ?? [])).toEqual({
			amount: "12345",
			currency: "usd",
			customer: account.stripe_customer_id,
			payment_method: "pm_card_visa",
			confirm: "true",
			off_session: "true",
			description: `Invoice ${invoice.number}`,
			"metadata[invoice_id]": invoice.id,
		});
	});

	it("uses the currency's minor units (JPY has none)", async () => {
		const { invoice } = await stripeInvoice({ baseFee: 5000, currency: "JPY" });
		await asked(invoice.id);
		const [request] = (await sentToStripe(invoice.id)).filter((r) => r.path === "/v1/payment_intents");
		expect(request?.form.get("amount")).toBe("5000");
		expect(request?.form.get("currency")).toBe("jpy");
	});

	it("without a payment method, makes a Checkout Session whose URL is the payment link", async () => {
		const { account, invoice } = await stripeInvoice({ baseFee: 50, paymentMethod: null });
		const collected = await asked(invoice.id);
		expect(collected.collection.checkout_session_id).toMatch(/^cs_/);
		expect(collected.collection.payment_url).toMatch(/^https:\/\//);
		const [request] = (await sentToStripe(invoice.id)).filter((r) => r.path === "/v1/checkout/sessions");
		expect(request?.headers["idempotency-key"]).toBe(`${invoice.id}:checkout_session:1`);
		expect(Object.fromEntries(request?.form ?? [])).toEqual({
			mode: "payment",
			customer: account.stripe_customer_id,
			"line_items[0][price_data][currency]": "usd",
			"line_items[0][price_data][unit_amount]": "5000",
			"line_items[0][price_data][product_data][name]": `Invoice ${invoice.number}`,
			"line_items[0][quantity]": "1",
			"metadata[invoice_id]": invoice.id,
			"payment_intent_data[metadata][invoice_id]": invoice.id,
			success_url: "https://billing.example.com/portal",
			cancel_url: "https://billing.example.com/portal",
		});
	});

	it("leaves manual accounts' invoices alone", async () => {
		const key = await testKey();
		const { account } = await customer({ base_fee: 10, charges: [] }, { key });
		const invoice = await generateOne(currentPeriod(), account.id, key);
		await new Promise((done) => setTimeout(done, 300));
		expect((await invoiceNow(invoice.id)).collection).toEqual({
			provider: "manual",
			status: "none",
			attempts: 0,
			next_attempt_at: null,
			payment_intent_id: null,
			checkout_session_id: null,
			payment_url: null,
			last_error: null,
		});
		expect(await sentToStripe(invoice.id)).toEqual([]);
		expect(await storedCollection(invoice.id)).toMatchObject({ collection_due: null });
	});

	it("a manual payment cancels the pending PaymentIntent after the answer", async () => {
		const { key, invoice } = await stripeInvoice();
		const before = await asked(invoice.id);
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, {}, { key });
		expect(paid.status, JSON.stringify(paid.body)).toBe(200);
		expect(paid.body.collection.status).toBe("canceled");
		const { eventually } = await import("./stripe");
		await eventually(async () => {
			const cancels = (await sentToStripe(invoice.id)).filter(
				(r) => r.path === `/v1/payment_intents/${before.collection.payment_intent_id}/cancel`,
			);
			expect(cancels).toHaveLength(1);
			expect(cancels[0]?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
			expect(cancels[0]?.headers["idempotency-key"]).toBe(`${invoice.id}:cancel:1`);
		});
		expect(await storedCollection(invoice.id)).toMatchObject({
			collection_status: "canceled",
			collection_due: null,
		});
	});

	it("voiding expires the open Checkout Session", async () => {
		const { key, invoice } = await stripeInvoice({ paymentMethod: null });
		const before = await asked(invoice.id);
		const voided = await post(`/v1/invoices/${invoice.id}/void`, {}, { key });
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		const { eventually } = await import("./stripe");
		await eventually(async () => {
			const expires = (await sentToStripe(invoice.id)).filter(
				(r) => r.path === `/v1/checkout/sessions/${before.collection.checkout_session_id}/expire`,
			);
			expect(expires).toHaveLength(1);
		});
		expect((await invoiceNow(invoice.id)).collection.status).toBe("canceled");
	});
});
