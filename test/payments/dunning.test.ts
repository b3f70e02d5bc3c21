import { env } from "cloudflare:workers";
import { it } from "vitest";
import { collectWithCron } from "../../src/payments/collect";
import { get } from "../helpers";
import { asked, invoiceNow, storedCollection, stripeInvoice, testKey } from "./fixtures";
import {
	deliverStripeEvent,
	describeWithStripe,
	eventually,
	expect,
	injectFault,
	sentToStripe,
	stripeEvent,
} from "./stripe";

const DAY = 86_400_000;

function failed(invoiceId: string, paymentIntentId: string, message = "Your card was declined.") {
	return stripeEvent("payment_intent.payment_failed", {
		id: paymentIntentId,
		object: "payment_intent",
		amount: 12345,
		currency: "usd",
		metadata: { invoice_id: invoiceId },
		last_payment_error: { message },
	});
}

async function outboxOf(invoiceId: string, kind: string) {
	const { results } = await env.DB.prepare(
		"SELECT data FROM webhook_events WHERE event = ?2 AND json_extract(data, '$.invoice_id') = ?1 ORDER BY created_at, rowid",
	)
		.bind(invoiceId, kind)
		.all<{ data: string }>();
	return results.map((row) => JSON.parse(row.data));
}

describeWithStripe("dunning", () => {
	it("retries on days 1, 4 and 9 after the first failure, then fails, tells, and blocks entitlements", async () => {
		const { invoice, instances } = await stripeInvoice({ baseFee: 123.45, block: true });
		const key = await testKey();
		const { collection } = await asked(invoice.id);
		const pi = collection.payment_intent_id as string;

		expect((await deliverStripeEvent(failed(invoice.id, pi))).status).toBe(200);
		let now = await invoiceNow(invoice.id);
		expect(now.collection).toMatchObject({
			status: "pending",
			attempts: 1,
			last_error: "Your card was declined.",
		});
		const first = Date.parse(now.collection.next_attempt_at) - DAY;
		expect(Math.abs(first - Date.now())).toBeLessThan(60_000);
		expect(await outboxOf(invoice.id, "payment.failed")).toEqual([
			{
				invoice_id: invoice.id,
				account_id: invoice.account_id,
				amount: 123.45,
				currency: "USD",
				attempt: 1,
				next_attempt_at: now.collection.next_attempt_at,
				error: "Your card was declined.",
			},
		]);

		// Not yet due: the cron asks nothing.
		await collectWithCron(env, new Date(first + DAY / 2));
		expect((await sentToStripe(`/v1/payment_intents/${pi}/confirm`)).length).toBe(0);

		for (const [attempt, day] of [
			[2, 1],
			[3, 4],
			[4, 9],
		] as const) {
			await collectWithCron(env, new Date(first + day * DAY + 1000));
			const confirms = (await sentToStripe(`/v1/payment_intents/${pi}/confirm`)).filter(
				(r) => r.headers["idempotency-key"] === `${invoice.id}:confirm:${attempt}`,
			);
			expect(confirms).toHaveLength(1);
			expect(Object.fromEntries(confirms[0]?.form ?? [])).toEqual({
				off_session: "true",
				payment_method: "pm_card_visa",
			});
			expect((await invoiceNow(invoice.id)).collection.next_attempt_at).toBeNull();
			expect((await deliverStripeEvent(failed(invoice.id, pi, `Declined ${attempt}`))).status).toBe(200);
		}

		now = await invoiceNow(invoice.id);
		expect(now.status).toBe("open");
		expect(now.collection).toMatchObject({
			status: "failed",
			attempts: 4,
			next_attempt_at: null,
			last_error: "Declined 4",
		});
		expect((await outboxOf(invoice.id, "payment.failed")).map((e) => e.attempt)).toEqual([1, 2, 3, 4]);
		const [finalEvent, ...more] = await outboxOf(invoice.id, "invoice.payment_failed");
		expect(more).toEqual([]);
		expect(finalEvent).toMatchObject({ invoice_id: invoice.id, status: "open", attempts: 4, amount: 123.45 });
		// The invoice's collection as it stood once failed, the same object the invoice shows.
		expect(finalEvent.collection).toEqual(now.collection);

		const entitlement = await get(`/v1/entitlements?agent_key=${instances[0]}`, { key });
		expect(entitlement.status, JSON.stringify(entitlement.body)).toBe(200);
		expect(entitlement.body).toMatchObject({ allowed: false, blocked_by: [invoice.id] });
	});

	it("a Checkout collection's failure only keeps Stripe's message", async () => {
		const { invoice } = await stripeInvoice({ paymentMethod: null });
		await asked(invoice.id);
		expect(
			(await deliverStripeEvent(failed(invoice.id, "pi_checkout_x", "Insufficient funds."))).status,
		).toBe(200);
		expect((await invoiceNow(invoice.id)).collection).toMatchObject({
			status: "pending",
			attempts: 0,
			next_attempt_at: null,
			last_error: "Insufficient funds.",
		});
		expect(await outboxOf(invoice.id, "payment.failed")).toEqual([]);
	});
});

describeWithStripe("Stripe refusing or not answering", () => {
	for (const answer of [500, 400, "hang"] as const) {
		it(`keeps the collection pending with last_error on ${answer}; the cron asks again with the same key`, async () => {
			const { invoice } = await stripeInvoice({
				baseFee: 77,
				// The request made after the issuing answer is refused (or never answered).
				beforeIssue: (account) => injectFault(`customer=${account.stripe_customer_id}`, answer, 1),
			});
			const pending = await eventually(async () => {
				const now = await invoiceNow(invoice.id);
				expect(now.collection.last_error).not.toBeNull();
				return now;
			}, 15_000);
			expect(pending.collection).toMatchObject({ status: "pending", payment_intent_id: null });
			expect(pending.collection.last_error).not.toContain("sk_test");
			expect(await storedCollection(invoice.id)).toMatchObject({ collection_due: "request" });

			await collectWithCron(env, new Date());
			const asked = await invoiceNow(invoice.id);
			expect(asked.collection.status).toBe("pending");
			expect(asked.collection.payment_intent_id).toMatch(/^pi_/);
			const requests = (await sentToStripe(invoice.id)).filter((r) => r.path === "/v1/payment_intents");
			expect(requests).toHaveLength(2);
			expect(requests.map((r) => r.headers["idempotency-key"])).toEqual([
				`${invoice.id}:payment_intent:1`,
				`${invoice.id}:payment_intent:1`,
			]);
			expect(await storedCollection(invoice.id)).toMatchObject({ collection_due: null });
		}, 40_000);
	}
});
