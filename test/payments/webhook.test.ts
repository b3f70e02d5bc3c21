import { env } from "cloudflare:workers";
import { it } from "vitest";
import { get, post } from "../helpers";
import { asked, invoiceNow, stripeInvoice, testKey } from "./fixtures";
import {
	deliverStripeEvent,
	describeWithStripe,
	expect,
	LIVE_WEBHOOK_SECRET,
	stripeEvent,
	stripeSignature,
	TEST_WEBHOOK_SECRET,
} from "./stripe";

function succeeded(invoiceId: string, paymentIntentId: string, amountReceived: number) {
	return stripeEvent("payment_intent.succeeded", {
		id: paymentIntentId,
		object: "payment_intent",
		amount: amountReceived,
		amount_received: amountReceived,
		currency: "usd",
		metadata: { invoice_id: invoiceId },
	});
}

async function paymentsOf(invoiceId: string) {
	const { results } = await env.DB.prepare(
		"SELECT kind, provider, amount, reference FROM payments WHERE invoice_id = ?1 ORDER BY created_at",
	)
		.bind(invoiceId)
		.all();
	return results;
}

async function outboxOf(invoiceId: string) {
	const { results } = await env.DB.prepare(
		"SELECT event, data FROM webhook_events WHERE json_extract(data, '$.invoice_id') = ?1 ORDER BY created_at, rowid",
	)
		.bind(invoiceId)
		.all<{ event: string; data: string }>();
	return results.map((row) => ({ event: row.event, data: JSON.parse(row.data) }));
}

describeWithStripe("Stripe's webhook", () => {
	it("a succeeded PaymentIntent pays the invoice once, however often Stripe delivers it", async () => {
		const { invoice } = await stripeInvoice({ baseFee: 123.45 });
		const { collection } = await asked(invoice.id);
		const event = succeeded(invoice.id, collection.payment_intent_id, 12345);
		const first = await deliverStripeEvent(event);
		expect(first).toEqual({ status: 200, body: { received: true } });
		const again = await deliverStripeEvent(event);
		expect(again.status).toBe(200);

		const paid = await invoiceNow(invoice.id);
		expect(paid.status).toBe("paid");
		expect(paid.amount_remaining).toBe(0);
		expect(paid.collection.status).toBe("succeeded");
		expect(await paymentsOf(invoice.id)).toEqual([
			{ kind: "payment", provider: "stripe", amount: "123.45", reference: collection.payment_intent_id },
		]);
		const events = (await outboxOf(invoice.id)).map((e) => e.event);
		expect(events.filter((e) => e === "invoice.paid")).toHaveLength(1);
		expect(events.filter((e) => e === "payment.successful")).toHaveLength(1);
		const listed = await get(`/v1/payments?invoice_id=${invoice.id}`, { key: await testKey() });
		expect(listed.body.payments[0]).toMatchObject({
			provider: "stripe",
			reference: collection.payment_intent_id,
		});
	});

	it("a Checkout payment's two events (session completed, PaymentIntent succeeded) record one payment", async () => {
		const { invoice } = await stripeInvoice({ baseFee: 50, paymentMethod: null });
		const { collection } = await asked(invoice.id);
		const session = stripeEvent("checkout.session.completed", {
			id: collection.checkout_session_id,
			object: "checkout.session",
			mode: "payment",
			payment_status: "paid",
			amount_total: 5000,
			payment_intent: "pi_from_checkout_1",
			metadata: { invoice_id: invoice.id },
		});
		expect((await deliverStripeEvent(session)).status).toBe(200);
		expect((await deliverStripeEvent(succeeded(invoice.id, "pi_from_checkout_1", 5000))).status).toBe(200);
		expect(await paymentsOf(invoice.id)).toEqual([
			{ kind: "payment", provider: "stripe", amount: "50", reference: "pi_from_checkout_1" },
		]);
		expect((await invoiceNow(invoice.id)).collection.status).toBe("succeeded");
	});

	it("refuses a wrong, missing or stale signature with 400, changing nothing", async () => {
		const { invoice } = await stripeInvoice();
		const { collection } = await asked(invoice.id);
		const event = succeeded(invoice.id, collection.payment_intent_id, 12345);
		const body = JSON.stringify(event);
		const wrong = await deliverStripeEvent(event, { secret: "whsec_not_ours" });
		expect(wrong.status).toBe(400);
		const stale = await deliverStripeEvent(event, { timestamp: Math.floor(Date.now() / 1000) - 301 });
		expect(stale.status).toBe(400);
		const missing = await deliverStripeEvent(event, { signature: "" });
		expect(missing.status).toBe(400);
		const tampered = await deliverStripeEvent(event, {
			signature: await stripeSignature(`${body} `, TEST_WEBHOOK_SECRET),
		});
		expect(tampered.status).toBe(400);
		expect(await paymentsOf(invoice.id)).toEqual([]);
		expect((await invoiceNow(invoice.id)).status).toBe("open");
		const { results } = await env.DB.prepare("SELECT id FROM stripe_events WHERE id = ?1")
			.bind(event.id)
			.all();
		expect(results).toEqual([]);
	});

	it("accepts any one matching v1 of several", async () => {
		const { invoice } = await stripeInvoice();
		const { collection } = await asked(invoice.id);
		const event = succeeded(invoice.id, collection.payment_intent_id, 12345);
		const signed = await stripeSignature(JSON.stringify(event), TEST_WEBHOOK_SECRET);
		const [t, v1] = signed.split(",");
		const response = await deliverStripeEvent(event, { signature: `${t},v1=${"0".repeat(64)},${v1}` });
		expect(response.status).toBe(200);
		expect((await invoiceNow(invoice.id)).status).toBe("paid");
	});

	it("ignores an event of the other environment's secret naming this invoice", async () => {
		const { invoice } = await stripeInvoice();
		const { collection } = await asked(invoice.id);
		const response = await deliverStripeEvent(succeeded(invoice.id, collection.payment_intent_id, 12345), {
			secret: LIVE_WEBHOOK_SECRET,
		});
		expect(response.status).toBe(200);
		expect((await invoiceNow(invoice.id)).status).toBe("open");
		expect(await paymentsOf(invoice.id)).toEqual([]);
	});

	it("acknowledges unknown event types", async () => {
		const response = await deliverStripeEvent(
			stripeEvent("customer.created", { id: "cus_1", object: "customer" }),
		);
		expect(response.status).toBe(200);
	});

	it("records nothing for an invoice already paid by hand, but audits the unapplied PaymentIntent", async () => {
		const { key, invoice } = await stripeInvoice();
		const { collection } = await asked(invoice.id);
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-1" }, { key });
		expect(paid.status).toBe(200);
		const response = await deliverStripeEvent(succeeded(invoice.id, collection.payment_intent_id, 12345));
		expect(response.status).toBe(200);
		expect(await paymentsOf(invoice.id)).toEqual([
			{ kind: "payment", provider: "manual", amount: "123.45", reference: "wire-1" },
		]);
		const { results } = await env.DB.prepare(
			"SELECT action, changes FROM audit_records WHERE resource_id = ?1 AND action = 'invoice.stripe_payment_unapplied'",
		)
			.bind(invoice.id)
			.all<{ action: string; changes: string }>();
		expect(results).toHaveLength(1);
		expect(JSON.parse(results[0]?.changes ?? "{}").payment_intent_id).toEqual([
			null,
			collection.payment_intent_id,
		]);
	});

	it("a setup session saves the account's payment method", async () => {
		const { key, account } = await stripeInvoice({ paymentMethod: null });
		const event = stripeEvent("checkout.session.completed", {
			id: "cs_setup_1",
			object: "checkout.session",
			mode: "setup",
			payment_method: "pm_saved_by_setup",
			metadata: { account_id: account.id },
		});
		expect((await deliverStripeEvent(event)).status).toBe(200);
		const after = await get(`/v1/accounts/${account.id}`, { key });
		expect(after.body.stripe_payment_method_id).toBe("pm_saved_by_setup");
	});

	it("a setup session without a payment method takes the one its SetupIntent names", async () => {
		const { key, account } = await stripeInvoice({ paymentMethod: null });
		const event = stripeEvent("checkout.session.completed", {
			id: "cs_setup_2",
			object: "checkout.session",
			mode: "setup",
			setup_intent: "seti_123",
			metadata: { account_id: account.id },
		});
		expect((await deliverStripeEvent(event)).status).toBe(200);
		const after = await get(`/v1/accounts/${account.id}`, { key });
		// stripe-mock's SetupIntent, expanded, names a payment method of its fixtures.
		expect(after.body.stripe_payment_method_id).toMatch(/^pm_/);
		const { sentToStripe } = await import("./stripe");
		const reads = await sentToStripe("/v1/setup_intents/seti_123");
		expect(reads.length).toBeGreaterThan(0);
		expect(reads.at(-1)?.method).toBe("GET");
		expect(reads.at(-1)?.path).toContain("expand");
	});
});
