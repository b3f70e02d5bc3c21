/**
 * The upcoming invoice (docs/billing.md#subscription-lifecycle): what the current period would be invoiced if it closed now — the same
 * loader, draft and proration as generation, so the two cannot disagree — with nothing stored: no number, no id,
 * no invoice.created. The subscription's accumulator is flushed first, as generation does, so usage still in
 * flight counts.
 */
import { activeSpan } from "../billing-period/activity";
import { periodWindow } from "../billing-period/period";
import { database } from "../db/client";
import type { Scope } from "../db/scope";
import { flushAccumulators, subscriptionAccumulators } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { missingRate } from "../exchange-rates/convert";
import { storedRate } from "../exchange-rates/invoice-rate";
import { Decimal } from "../lib/decimal";
import { conflict } from "../lib/errors";
import { periodOf } from "../lib/time";
import { getSubscription } from "../subscriptions/views";
import { computeInvoice } from "./computed";
import { withConversions } from "./conversions";
import { type InvoiceView, invoiceView } from "./invoices";
import { prepareIssue } from "./issue";
import { loadPeriodStates } from "./load";

export type UpcomingInvoiceView = Omit<InvoiceView, "id" | "number"> & { id: null; number: null };

export async function upcomingInvoice({
	env,
	scope,
	subscriptionId,
	now = new Date(),
}: {
	env: Env;
	scope: Scope;
	subscriptionId: string;
	now?: Date;
}): Promise<UpcomingInvoiceView> {
	const db = database(env.DB);
	const subscription = await getSubscription({ db, scope, id: subscriptionId });
	const at = now.toISOString();
	const window = periodWindow(periodOf(at));
	const lifetime = {
		startedAt: subscription.started_at,
		endsAt: subscription.cancelled_at ?? subscription.cancel_at,
	};
	if (activeSpan(window, lifetime) === null) {
		throw conflict(
			`Subscription ${subscriptionId} is not active in ${window.period}: it has no upcoming invoice.`,
		);
	}
	await flushAccumulators(
		env,
		subscriptionAccumulators(scope.environment, subscriptionId, subscription.shards),
	);
	const [loaded] = await loadPeriodStates(db, scope, window, [
		{
			id: subscription.id,
			accountId: subscription.account_id,
			shards: subscription.shards,
			billingCurrency: subscription.billing_currency,
			...lifetime,
		},
	]);
	if (!loaded) throw new Error(`Subscription ${subscriptionId} has no plan for ${window.period}`);
	// Converted at the rate in effect now (docs/currencies.md); none → 409 naming the pair.
	const { ready, refused } = await withConversions(db, scope, [loaded], at);
	if (refused.length > 0) throw missingRate(refused);
	const state = ready[0] as typeof loaded;
	const currency = state.billingCurrency ?? state.plan.currency;
	// Everything is billed already: the period would close with an empty supplementary invoice.
	const draft = computeInvoice(state);
	const amount = draft?.amount ?? Decimal.ZERO;
	// Terms as issuing would set them now (due date, bill-to, credits, the payer's under billing "parent": see
	// docs/account-hierarchies.md), read without settling anything.
	const [terms] = await prepareIssue(
		env.DB,
		scope,
		[{ accountId: subscription.account_id, amount, currency }],
		at,
		window.period,
		{ settle: false },
	);
	if (!terms) throw new Error(`no terms for the upcoming invoice of ${subscriptionId}`);
	const row = {
		id: "",
		environment: scope.environment,
		number: 0,
		accountId: subscription.account_id,
		subscriptionId: subscription.id,
		ratePlanId: state.plan.id,
		billingPeriod: window.period,
		sequence: draft?.sequence ?? 0,
		kind: draft?.kind ?? "supplementary",
		status: terms.status,
		currency,
		amount: amount.toString(),
		exchangeRate: storedRate(draft?.exchangeRate ?? state.conversion?.rate ?? null),
		issuedAt: at,
		dueAt: terms.dueAt,
		billTo: terms.billTo,
		creditsApplied: terms.creditsApplied.toString(),
		paidAt: terms.paidAt,
		voidedAt: null,
		createdAt: at,
		creditedMinor: 0,
		creditedToInvoice: "0",
		thresholdSequence: null,
		discountCredited: "0",
		payerAccountId: terms.payerAccountId,
	};
	const lines = (draft?.lines ?? []).map((line) => ({
		metric: line.metric,
		description: line.description,
		quantity: line.quantity.toString(),
		amount: line.amount.toString(),
		originalAmount: line.original?.amount.toString() ?? null,
		originalCurrency: line.original?.currency ?? null,
	}));
	return { ...invoiceView(row, lines), id: null, number: null };
}
