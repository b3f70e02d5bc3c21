/**
 * Many invoices of Stripe accounts due at once (a company billing its customers at the turn of the month): one
 * collection run — the one after the answer that issued them, or the cron's — asks Stripe for every one of them
 * within 10 s, not a first page of them with the rest left to later cron runs, and never so many calls at once that
 * they time out waiting for a connection.
 */
import { env } from "cloudflare:workers";
import { it } from "vitest";
import { collectDue } from "../../src/payments/collect";
import { asked, storedCollection, stripeInvoice } from "./fixtures";
import { describeWithStripe, expect, sentToStripe } from "./stripe";

const MORE = 69;

/** `count` more open invoices like `id` (other ids, numbers and sequences), issued as the same Stripe account's. */
async function moreInvoicesLike(id: string, count: number): Promise<string[]> {
	const { results } = await env.DB.prepare(
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
		INSERT INTO invoices (id, environment, number, account_id, subscription_id, rate_plan_id, billing_period,
			sequence, kind, status, currency, amount, issued_at, paid_at, voided_at, created_at, due_at, bill_to,
			credits_applied)
		SELECT i.id || printf('_%03d', n.i), i.environment, 900000 + n.i, i.account_id, i.subscription_id,
			i.rate_plan_id, i.billing_period, i.sequence + n.i, i.kind, 'open', i.currency, i.amount, i.issued_at, NULL,
			NULL, i.created_at, i.due_at, i.bill_to, i.credits_applied
		FROM invoices i, n WHERE i.id = ?1 RETURNING id`,
	)
		.bind(id, count)
		.all<{ id: string }>();
	return results.map((row) => row.id);
}

describeWithStripe("collection of many invoices at once", () => {
	it(`asks Stripe for all ${MORE + 1} due invoices in one run, within 10 s`, async () => {
		const { invoice } = await stripeInvoice({ baseFee: 12.5 });
		await asked(invoice.id);
		const ids = await moreInvoicesLike(invoice.id, MORE);
		expect(ids).toHaveLength(MORE);
		expect(await storedCollection(ids[MORE - 1] as string)).toMatchObject({
			collection_status: "pending",
			collection_due: "request",
		});

		const started = Date.now();
		await collectDue(env, "test");
		expect(Date.now() - started).toBeLessThan(10_000);
		const sent = new Set(
			(await sentToStripe("/v1/payment_intents ")).map((r) => r.form.get("metadata[invoice_id]")),
		);
		expect(ids.filter((id) => !sent.has(id))).toEqual([]);
		const { results } = await env.DB.prepare(
			`SELECT count(*) AS n FROM invoices WHERE account_id = ?1 AND collection_payment_intent_id IS NOT NULL
				AND collection_due IS NULL AND collection_last_error IS NULL`,
		)
			.bind(invoice.account_id)
			.all<{ n: number }>();
		expect(results[0]?.n).toBe(MORE + 1);
	}, 60_000);
});
