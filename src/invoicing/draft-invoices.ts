/**
 * Draft invoices (docs/credit-notes.md#draft-invoices). An account with grace days gets its period's regular
 * invoice as a draft first: no number yet, no credits, no webhook, not revenue. Until it is finalized, usage
 * that arrives for the period updates the draft's lines (the whole period rated again, as the regular invoice
 * would be) instead of making a supplementary invoice. One-off lines added by hand are kept as they are.
 *
 * A draft's number column holds a negative placeholder (the column is NOT NULL and unique); the API shows null.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { accountsWithParentsQuery, type HierarchyAccountRow, payerIdOf } from "../accounts/payers";
import type { PeriodWindow } from "../billing-period/period";
import { abortUnlessChanged, isAbortedByGuard, statement } from "../db/batch";
import { type Db, isUniqueViolation } from "../db/client";
import { accounts, invoiceLines, invoices } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { markStatements } from "../db/write-once";
import { storedRate } from "../exchange-rates/invoice-rate";
import { Decimal } from "../lib/decimal";
import { type ComputedInvoice, computeInvoice, type SubscriptionPeriodState } from "./computed";
import { type InvoiceView, invoiceView } from "./invoices";
import { dueDate } from "./issue";
import { ONE_OFF_METRIC } from "./one-off-lines";
import { lineRow, type PeriodDrafts, rowOfDraft } from "./write";

interface StoredDraftLine {
	invoiceId: string;
	metric: string;
	description: string;
	quantity: string;
	amount: string;
	agentShares: { agent_id: string | null; quantity: string }[] | null;
}

export interface DraftRefresh {
	invoiceId: string;
	/** The period rated again: the draft's lines other than its one-off lines. */
	metered: ComputedInvoice;
	oneOffs: StoredDraftLine[];
	/** How many lines the draft had when read: a line added meanwhile makes the refresh wait for the next run. */
	linesRead: number;
}

export interface DraftPlan {
	/** Subscriptions invoiced as usual. */
	issue: SubscriptionPeriodState[];
	/** New drafts, for accounts with grace days and no invoice of the period yet. */
	newDrafts: ComputedInvoice[];
	/** Drafts whose lines late usage changed. */
	refreshes: DraftRefresh[];
}

const sameLines = (a: readonly StoredDraftLine[], b: ComputedInvoice["lines"]) =>
	a.length === b.length &&
	a.every((line, i) => {
		const other = b[i] as ComputedInvoice["lines"][number];
		return (
			line.metric === other.metric &&
			Decimal.from(line.quantity).eq(other.quantity) &&
			Decimal.from(line.amount).eq(other.amount)
		);
	});

/** Which subscriptions of the group get a new draft, an updated draft, or an invoice as usual. */
export async function planDrafts(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	states: readonly SubscriptionPeriodState[],
): Promise<DraftPlan> {
	if (states.length === 0) return { issue: [], newDrafts: [], refreshes: [] };
	const accountIds = [...new Set(states.map((state) => state.accountId))];
	const subscriptionIds = states.map((state) => state.subscriptionId);
	const isDraftOfPeriod = inScope(
		scope,
		invoices,
		eq(invoices.status, "draft"),
		eq(invoices.billingPeriod, window.period),
		inArray(invoices.subscriptionId, subscriptionIds),
	);
	const drafted = db.select({ id: invoices.id }).from(invoices).where(isDraftOfPeriod);
	const [graceRows, draftRows, lineRows] = await db.batch([
		db
			.select({ id: accounts.id, graceDays: accounts.invoiceGraceDays })
			.from(accounts)
			.where(inScope(scope, accounts, inArray(accounts.id, accountIds))),
		db
			.select({ id: invoices.id, subscriptionId: invoices.subscriptionId, rate: invoices.exchangeRate })
			.from(invoices)
			.where(isDraftOfPeriod),
		db
			.select({
				invoiceId: invoiceLines.invoiceId,
				metric: invoiceLines.metric,
				description: invoiceLines.description,
				quantity: invoiceLines.quantity,
				amount: invoiceLines.amount,
				agentShares: invoiceLines.agentShares,
			})
			.from(invoiceLines)
			.where(and(inScope(scope, invoiceLines), inArray(invoiceLines.invoiceId, drafted)))
			.orderBy(asc(invoiceLines.invoiceId), asc(invoiceLines.position)),
	]);
	const graceOf = new Map(graceRows.map((row) => [row.id, row.graceDays]));
	const draftOf = new Map(draftRows.map((row) => [row.subscriptionId, row.id]));
	const rateOf = new Map(draftRows.map((row) => [row.id, row.rate?.id ?? null]));
	const linesOf = new Map<string, StoredDraftLine[]>();
	for (const line of lineRows) linesOf.set(line.invoiceId, [...(linesOf.get(line.invoiceId) ?? []), line]);

	const plan: DraftPlan = { issue: [], newDrafts: [], refreshes: [] };
	for (const state of states) {
		const draftId = draftOf.get(state.subscriptionId);
		if (draftId !== undefined) {
			const metered = computeInvoice({
				...state,
				invoiced: false,
				invoicedWhileOpen: false,
				billedLines: state.thresholdLines ?? [],
			});
			const lines = linesOf.get(draftId) ?? [];
			const oneOffs = lines.filter((line) => line.metric === ONE_OFF_METRIC);
			const current = lines.filter((line) => line.metric !== ONE_OFF_METRIC);
			// A rate newer than the draft's converts it again, even to the same amounts (docs/currencies.md).
			const rateChanged = (metered?.exchangeRate?.id ?? null) !== (rateOf.get(draftId) ?? null);
			if (metered !== null && (rateChanged || !sameLines(current, metered.lines))) {
				plan.refreshes.push({ invoiceId: draftId, metered, oneOffs, linesRead: lines.length });
			}
		} else if (!state.invoiced && (graceOf.get(state.accountId) ?? 0) > 0) {
			const regular = computeInvoice(state);
			if (regular !== null) plan.newDrafts.push(regular);
		} else {
			plan.issue.push(state);
		}
	}
	return plan;
}

/** A negative placeholder for a draft's number: unique in practice (47 random bits), never shown. */
function placeholderNumber(): number {
	const [high = 0, low = 0] = crypto.getRandomValues(new Uint32Array(2));
	return -((high & 0x7fff) * 2 ** 32 + low + 1);
}

function lineRows(invoiceId: string, lines: ComputedInvoice["lines"], oneOffs: readonly StoredDraftLine[]) {
	return [
		...lines.map(lineRow),
		...oneOffs.map((line) => ({
			metric: line.metric,
			description: line.description,
			quantity: line.quantity,
			amount: line.amount,
			agent_shares: null,
		})),
	].map((line, position) => JSON.stringify({ invoice_id: invoiceId, position, ...line }));
}

function insertLines(d1: D1Database, environment: string, rows: string[]): D1PreparedStatement {
	return statement(
		d1,
		`INSERT INTO invoice_lines (invoice_id, position, environment, metric, description, quantity, amount, agent_shares,
			original_amount, original_currency, part_starts_at)
		SELECT l.value ->> '$.invoice_id', l.value ->> '$.position', ?1, l.value ->> '$.metric',
			l.value ->> '$.description', l.value ->> '$.quantity', l.value ->> '$.amount', l.value ->> '$.agent_shares',
			l.value ->> '$.original_amount', l.value ->> '$.original_currency', l.value ->> '$.part_starts_at'
		FROM json_each(?2) AS l`,
		environment,
		`[${rows.join(",")}]`,
	);
}

/** Stores new drafts, one batch each; a draft a concurrent generator stored first is skipped. */
export async function storeDrafts({
	db,
	scope,
	window,
	drafts,
	now,
	mark,
}: PeriodDrafts): Promise<InvoiceView[]> {
	if (drafts.length === 0) return [];
	const d1 = db.$client;
	const accountIds = [...new Set(drafts.map((draft) => draft.accountId))];
	// With their parents: a child billed to its parent has the parent's terms (docs/account-hierarchies.md).
	const read = await accountsWithParentsQuery(d1, scope.environment, accountIds).all<HierarchyAccountRow>();
	const accountOf = new Map(read.results.map((row) => [row.id, row]));
	const stored: InvoiceView[] = [];
	for (const draft of drafts) {
		const own = accountOf.get(draft.accountId);
		if (!own) continue;
		const account = accountOf.get(payerIdOf(own)) ?? own;
		const row = {
			...rowOfDraft(scope, window, draft),
			number: placeholderNumber(),
			status: "draft" as const,
			issuedAt: now,
			paidAt: null,
			voidedAt: null,
			createdAt: now,
			// Provisional until finalized, when they are set again from the account as it is then.
			dueAt: dueDate(now, account.net_terms_days),
			billTo: {
				name: account.name,
				email: account.email,
				billing_address: account.billing_address === null ? null : JSON.parse(account.billing_address),
			},
			creditsApplied: "0",
			creditedMinor: 0,
			creditedToInvoice: "0",
			// As the insert's trigger sets it (migration 0021).
			payerAccountId: account.id,
		};
		const rows = lineRows(row.id, draft.lines, []);
		try {
			await d1.batch([
				statement(
					d1,
					`INSERT INTO invoices (id, environment, number, account_id, subscription_id, rate_plan_id, billing_period,
						sequence, kind, status, currency, amount, issued_at, paid_at, voided_at, created_at, due_at, bill_to,
						credits_applied, exchange_rate)
					VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'draft', ?10, ?11, ?12, NULL, NULL, ?12, ?13, ?14, '0', ?15)`,
					row.id,
					row.environment,
					row.number,
					row.accountId,
					row.subscriptionId,
					row.ratePlanId,
					row.billingPeriod,
					row.sequence,
					row.kind,
					row.currency,
					row.amount,
					now,
					row.dueAt,
					JSON.stringify(row.billTo),
					row.exchangeRate === null ? null : JSON.stringify(row.exchangeRate),
				),
				...(rows.length > 0 ? [insertLines(d1, scope.environment, rows)] : []),
				...markStatements(mark, d1, [row.id]),
			]);
		} catch (error) {
			if (isUniqueViolation(error)) continue;
			throw error;
		}
		stored.push(
			invoiceView(
				row,
				draft.lines.map((line) => ({
					...line,
					quantity: line.quantity.toString(),
					amount: line.amount.toString(),
					originalAmount: line.original?.amount.toString() ?? null,
					originalCurrency: line.original?.currency ?? null,
				})),
			),
		);
	}
	return stored;
}

/**
 * Replaces the metered lines of drafts with the period rated again, keeping their one-off lines after them. A
 * draft finalized, discarded or given a line since it was read is left alone (the next run sees it as it is).
 */
export async function refreshDrafts(db: Db, scope: Scope, refreshes: readonly DraftRefresh[]): Promise<void> {
	const d1 = db.$client;
	for (const { invoiceId, metered, oneOffs, linesRead } of refreshes) {
		const amount = metered.amount.add(Decimal.sum(oneOffs.map((line) => Decimal.from(line.amount))));
		try {
			await d1.batch([
				statement(
					d1,
					`UPDATE invoices SET amount = ?3, exchange_rate = ?5 WHERE environment = ?1 AND id = ?2 AND status = 'draft'
						AND (SELECT COUNT(*) FROM invoice_lines WHERE invoice_id = ?2) = ?4`,
					scope.environment,
					invoiceId,
					amount.toString(),
					linesRead,
					JSON.stringify(storedRate(metered.exchangeRate ?? null)),
				),
				abortUnlessChanged(d1),
				statement(d1, "DELETE FROM invoice_lines WHERE invoice_id = ?1", invoiceId),
				insertLines(d1, scope.environment, lineRows(invoiceId, metered.lines, oneOffs)),
			]);
		} catch (error) {
			if (!isAbortedByGuard(error)) throw error;
		}
	}
}
