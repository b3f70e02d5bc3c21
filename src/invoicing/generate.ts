/**
 * Invoice generation for one billing period (docs/billing.md#invoices) — the single function behind both
 * POST /v1/invoices/generate and the monthly cron, so both bill exactly alike.
 *
 * Safe to run any number of times, concurrently: each subscription gets what it is owed now (computed.ts) and a
 * concurrent run that stored the same invoice first makes ours skip it (write.ts). Subscriptions are handled in
 * groups: flush their usage accumulators (so usage still in flight is billed), read the group's state in one
 * round trip, then store the group's invoices in one batch. D1 work stays bounded per group, never
 * per-subscription reads or writes.
 */
import { isBillingPeriod, isFuturePeriod, type PeriodWindow, periodWindow } from "../billing-period/period";
import { database } from "../db/client";
import { getInScope } from "../db/rows";
import { accounts } from "../db/schema";
import type { Scope } from "../db/scope";
import type { WriteMark } from "../db/write-once";
import { flushAccumulators, subscriptionAccumulators } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { conflict, validationError } from "../lib/errors";
import { inexactAmountMessage, isExactAsJsonNumber } from "../lib/money";
import { nowIso } from "../lib/time";
import { finishPendingAdoptions } from "../subscriptions/adoption";
import { type ComputedInvoice, computeInvoice } from "./computed";
import { recordConversionWaits } from "./conversion-waits";
import { withConversions } from "./conversions";
import { planDrafts, refreshDrafts, storeDrafts } from "./draft-invoices";
import type { InvoiceView } from "./invoices";
import { loadPeriodStates, type SubscriptionInPeriod, subscriptionsInPeriod } from "./load";
import { storeInvoices } from "./write";

const SUBSCRIPTIONS_PER_GROUP = 50;

export interface GenerateInvoicesInput {
	env: Env;
	scope: Scope;
	/** `YYYY-MM`, not after the current month. */
	billingPeriod: string;
	/** Only this account's subscriptions; all accounts of the environment when absent. */
	accountId?: string;
	now?: Date;
	/** The Idempotency-Key's mark (db/write-once.ts): each batch that stores invoices records them under the key. */
	mark?: WriteMark;
	/** Receives the pairs of invoices not issued for want of an exchange rate (docs/currencies.md). */
	refused?: { from: string; to: string }[];
}

/** The invoices created by this call, in subscription order (empty when everything was already billed). */
export async function generateInvoicesForPeriod(input: GenerateInvoicesInput): Promise<InvoiceView[]> {
	const { env, scope, billingPeriod, accountId, now = new Date(), mark, refused = [] } = input;
	if (!isBillingPeriod(billingPeriod)) {
		throw validationError("billing_period", "Must be a month written YYYY-MM, e.g. 2026-11.");
	}
	if (isFuturePeriod(billingPeriod, now)) {
		throw validationError(
			"billing_period",
			`${billingPeriod} is in the future; invoice a past or the current month.`,
		);
	}
	const db = database(env.DB);
	if (accountId !== undefined) await getInScope(db, scope, accounts, "account", accountId);

	const window = periodWindow(billingPeriod);
	const inPeriod = await subscriptionsInPeriod(db, scope, window, accountId);
	const created: InvoiceView[] = [];
	for (let i = 0; i < inPeriod.length; i += SUBSCRIPTIONS_PER_GROUP) {
		const group = inPeriod.slice(i, i + SUBSCRIPTIONS_PER_GROUP);
		created.push(...(await invoiceGroup(env, scope, window, group, mark, refused)));
	}
	return created;
}

async function invoiceGroup(
	env: Env,
	scope: Scope,
	window: PeriodWindow,
	group: SubscriptionInPeriod[],
	mark: WriteMark | undefined,
	refused: { from: string; to: string }[],
): Promise<InvoiceView[]> {
	const db = database(env.DB);
	// Usage a subscription adopts (docs/billing.md#subscription-lifecycle) is billed with its period: an adoption still pending is finished first.
	await finishPendingAdoptions(
		env,
		scope,
		group.map((s) => s.id),
	);
	await flushAccumulators(
		env,
		group.flatMap((s) => subscriptionAccumulators(scope.environment, s.id, s.shards)),
	);
	// In the billing currency at the rate in effect now; without one, the invoice waits (conversion-waits.ts).
	const converted = await withConversions(
		db,
		scope,
		await loadPeriodStates(db, scope, window, group),
		nowIso(),
	);
	await recordConversionWaits(db, scope, window.period, converted);
	refused.push(...converted.refused);
	const states = converted.ready;
	// Accounts with grace days get drafts, which late usage updates (draft-invoices.ts).
	const { issue, newDrafts, refreshes } = await planDrafts(db, scope, window, states);
	const drafts = issue.flatMap((state) => computeInvoice(state) ?? []);
	for (const draft of [...drafts, ...newDrafts, ...refreshes.map((r) => r.metered)]) {
		assertExactAmounts(draft, window.period);
	}
	await refreshDrafts(db, scope, refreshes);
	const drafted = await storeDrafts({ db, scope, window, drafts: newDrafts, now: nowIso(), mark });
	return [...drafted, ...(await storeInvoices({ db, scope, window, drafts, now: nowIso(), mark }))];
}

/**
 * An invoice whose amount or a line's amount a JSON number cannot carry exactly is not issued: the group's
 * invoices are refused before anything is stored, rather than answered rounded.
 */
function assertExactAmounts(draft: ComputedInvoice, period: string): void {
	const inexact = [
		...draft.lines.map((line) => ({ what: `its ${line.metric} line`, amount: line.amount })),
		{ what: "its amount", amount: draft.amount },
	].find(({ amount }) => !isExactAsJsonNumber(amount));
	if (!inexact) return;
	throw conflict(
		`The invoice of subscription ${draft.subscriptionId} for ${period} cannot be issued: ` +
			`${inexactAmountMessage(inexact.what, inexact.amount, draft.currency)} Nothing was stored.`,
	);
}
