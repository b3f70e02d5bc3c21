import { env } from "cloudflare:workers";
import { it } from "vitest";
import { type ApiResponse, expectError, post } from "../helpers";
import { asked, invoiceNow, stripeInvoice } from "./fixtures";
import {
	deliverStripeEvent,
	describeWithStripe,
	eventually,
	expect,
	injectFault,
	sentToStripe,
	stripeEvent,
} from "./stripe";

async function paidThroughStripe() {
	const setup = await stripeInvoice({ baseFee: 100 });
	const { collection } = await asked(setup.invoice.id);
	const pi = collection.payment_intent_id as string;
	const event = stripeEvent("payment_intent.succeeded", {
		id: pi,
		object: "payment_intent",
		amount_received: 10000,
		currency: "usd",
		metadata: { invoice_id: setup.invoice.id },
	});
	expect((await deliverStripeEvent(event)).status).toBe(200);
	return { ...setup, pi };
}

async function rowsOf(sql: string, id: string) {
	return (await env.DB.prepare(sql).bind(id).all()).results;
}

describeWithStripe("credit notes on invoices collected through Stripe", () => {
	it("refunds through Stripe, keyed by the credit note, the refund row referencing Stripe's refund", async () => {
		const { key, invoice, pi } = await paidThroughStripe();
		const note = await post(
			`/v1/invoices/${invoice.id}/credit-notes`,
			{ amount: 25.5, reason: "billing_error", refund: true },
			{ key },
		);
		expect(note.status, JSON.stringify(note.body)).toBe(201);
		const [refund, ...more] = (await sentToStripe(`${note.body.id}:refund`)).filter(
			(r) => r.path === "/v1/refunds",
		);
		expect(more).toEqual([]);
		expect(refund?.headers["idempotency-key"]).toBe(`${note.body.id}:refund`);
		expect(Object.fromEntries(refund?.form ?? [])).toEqual({
			payment_intent: pi,
			amount: "2550",
			"metadata[credit_note_id]": note.body.id,
		});
		const rows = await rowsOf(
			"SELECT kind, provider, amount, reference FROM payments WHERE invoice_id = ?1 AND kind = 'refund'",
			invoice.id,
		);
		expect(rows).toHaveLength(1);
		expect(rows[0]).toMatchObject({ kind: "refund", provider: "stripe", amount: "-25.5" });
		expect(String(rows[0]?.reference)).toMatch(/^re_/);
	});

	it("answers 502 and stores no credit note when Stripe refuses the refund", async () => {
		const { key, invoice, pi } = await paidThroughStripe();
		await injectFault(`payment_intent=${pi}`, 400, 1, {
			error: { type: "invalid_request_error", message: "Charge has already been refunded." },
		});
		const note = await post(
			`/v1/invoices/${invoice.id}/credit-notes`,
			{ amount: 10, reason: "billing_error", refund: true },
			{ key },
		);
		const error = expectError(note, 502, "payment_provider_error");
		expect(error.message).toContain("Charge has already been refunded.");
		expect(await rowsOf("SELECT id FROM credit_notes WHERE invoice_id = ?1", invoice.id)).toEqual([]);
		expect(((await invoiceNow(invoice.id)) as unknown as { amount_credited: number }).amount_credited).toBe(
			0,
		);
	});

	it("a credit note on an open invoice asks Stripe again for what remains", async () => {
		const { key, invoice } = await stripeInvoice({ baseFee: 100 });
		const first = await asked(invoice.id);
		const note = await post(
			`/v1/invoices/${invoice.id}/credit-notes`,
			{ amount: 40, reason: "billing_error" },
			{ key },
		);
		expect(note.status, JSON.stringify(note.body)).toBe(201);
		const again = await eventually(async () => {
			const now = await invoiceNow(invoice.id);
			expect(now.collection.payment_intent_id).not.toBe(first.collection.payment_intent_id);
			expect(now.collection.payment_intent_id).not.toBeNull();
			return now;
		});
		expect(again.collection.status).toBe("pending");
		const sent = await sentToStripe(invoice.id);
		expect(
			sent.some((r) => r.path === `/v1/payment_intents/${first.collection.payment_intent_id}/cancel`),
		).toBe(true);
		const created = sent.filter((r) => r.path === "/v1/payment_intents");
		expect(created.map((r) => [r.headers["idempotency-key"], r.form.get("amount")])).toEqual([
			[`${invoice.id}:payment_intent:1`, "10000"],
			[`${invoice.id}:round-2:payment_intent:1`, "6000"],
		]);
	});
});

describeWithStripe("a refund whose Worker died between Stripe's refund and the credit note", () => {
	/** The request fails after Stripe refunded, before its credit note's batch (a trigger refuses the note). */
	async function failsAfterRefund(invoiceId: string, send: () => Promise<ApiResponse>) {
		const trigger = `crash_${invoiceId}`;
		await env.DB.prepare(
			`CREATE TRIGGER ${trigger} BEFORE INSERT ON credit_notes WHEN NEW.invoice_id = '${invoiceId}'
			BEGIN SELECT RAISE(ABORT, 'simulated crash after the refund'); END`,
		).run();
		const quiet = console.error;
		console.error = () => {};
		try {
			expect((await send()).status).toBe(500);
		} finally {
			console.error = quiet;
			await env.DB.prepare(`DROP TRIGGER ${trigger}`).run();
		}
	}

	async function refundOnce(amount: number, idempotencyKey: string, kill: boolean) {
		const { key, invoice, pi } = await paidThroughStripe();
		const send = () =>
			post(
				`/v1/invoices/${invoice.id}/credit-notes`,
				{ amount, reason: "duplicate", refund: true },
				{ key, headers: { "Idempotency-Key": idempotencyKey } },
			);
		await failsAfterRefund(invoice.id, send);
		if (kill) {
			// A Worker killed there leaves its claim in progress; the repeat of issue 43 came 62 s later.
			await env.DB.prepare(
				"UPDATE idempotency_records SET state = 'in_progress', created_at = ?1 WHERE key = ?2",
			)
				.bind(new Date(Date.now() - 62_000).toISOString(), idempotencyKey)
				.run();
		}
		const repeat = await send();
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		const refunds = (await sentToStripe(`payment_intent=${pi}`)).filter((r) => r.path === "/v1/refunds");
		// Stripe answers a repeated Idempotency-Key (same parameters) with the refund it made: one refund.
		expect(
			refunds.map((r) => [r.headers["idempotency-key"], r.form.get("metadata[credit_note_id]")]),
		).toEqual([
			[`${repeat.body.id}:refund`, repeat.body.id],
			[`${repeat.body.id}:refund`, repeat.body.id],
		]);
		expect(await rowsOf("SELECT id FROM credit_notes WHERE invoice_id = ?1", invoice.id)).toEqual([
			{ id: repeat.body.id },
		]);
		expect(
			await rowsOf("SELECT amount FROM payments WHERE invoice_id = ?1 AND kind = 'refund'", invoice.id),
		).toEqual([{ amount: `-${amount}` }]);
	}

	it("killed: the repeat after 60 s asks Stripe with the same Idempotency-Key and stores one credit note", async () => {
		await refundOnce(30, `refund-killed-${Date.now()}`, true);
	});

	it("failed with a 500: the repeat at once asks Stripe with the same key too", async () => {
		await refundOnce(12, `refund-failed-${Date.now()}`, false);
	});
});
