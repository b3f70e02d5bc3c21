/**
 * Storing invoices. A group of drafts is stored by one D1 batch (atomic) of a few statements, whatever its size:
 * it reserves a block of numbers with one counter update, inserts the invoices, their lines and their
 * invoice.created outbox rows, rows travelling as JSON parameters (json_each).
 *
 * Concurrency is settled by constraints, not locks: two generators that drafted the same subscription and
 * period use the same sequence, so the unique (subscription_id, billing_period, sequence) index fails the
 * loser's whole batch — counter update included, so numbers stay gapless. The loser then stores its drafts one
 * by one (storeInvoice), each in its own batch, and skips those the winner stored.
 *
 * Each invoice is issued with terms (issue.ts): due date, bill-to, and the prepaid credits that pay it, whose
 * ledger rows go in the same batch. If a concurrent batch spent those credits first, the ledger's trigger fails
 * ours whole, and the group is planned again from what is left.
 */
import { auditInserts, created } from "../audit/record";
import type { PeriodWindow } from "../billing-period/period";
import { isCreditOverdrawn, ledgerInsert } from "../credits/ledger";
import { chunkJsonRows, returned, statement } from "../db/batch";
import { type Db, isUniqueViolation } from "../db/client";
import type { Scope } from "../db/scope";
import { markStatements, type WriteMark } from "../db/write-once";
import { storedRate } from "../exchange-rates/invoice-rate";
import { Decimal } from "../lib/decimal";
import { contention } from "../lib/errors";
import { newId } from "../lib/ids";
import { outboxInsertMany, type WebhookEventKind } from "../webhooks/outbox";
import { collectionsFrom, readCollections } from "./collection-view";
import type { ComputedInvoice } from "./computed";
import { type InvoiceRow, type InvoiceView, invoiceEventData, invoiceView } from "./invoices";
import { applicationRows, type IssueTerms, prepareIssue } from "./issue";
import { discountCreditInsert } from "./threshold-rest";

/** A computed line as invoice_lines stores it (the issued invoice's and the draft's alike). */
export function lineRow(line: ComputedInvoice["lines"][number]) {
	return {
		metric: line.metric,
		description: line.description,
		quantity: line.quantity.toString(),
		amount: line.amount.toString(),
		agent_shares: line.agentShares === null ? null : JSON.stringify(line.agentShares),
		original_amount: line.original ? line.original.amount.toString() : null,
		original_currency: line.original ? line.original.currency : null,
		part_starts_at: line.partStartsAt ?? null,
	};
}

function storedLines(draft: ComputedInvoice) {
	return draft.lines.map((line, position) => ({ position, ...lineRow(line) }));
}

const lineOfStored = (line: ReturnType<typeof storedLines>[number]) => ({
	...line,
	originalAmount: line.original_amount,
	originalCurrency: line.original_currency,
});

/** What an invoice row takes from its computed draft, issued or stored as a draft invoice (draft-invoices.ts). */
export function rowOfDraft(scope: Scope, window: PeriodWindow, draft: ComputedInvoice) {
	return {
		id: newId("inv"),
		environment: scope.environment,
		accountId: draft.accountId,
		subscriptionId: draft.subscriptionId,
		ratePlanId: draft.ratePlanId,
		billingPeriod: window.period,
		sequence: draft.sequence,
		kind: draft.kind,
		currency: draft.currency,
		amount: draft.amount.toString(),
		thresholdSequence: draft.thresholdSequence ?? null,
		discountCredited: (draft.discountCredited ?? Decimal.ZERO).toString(),
		exchangeRate: storedRate(draft.exchangeRate ?? null),
	};
}

function invoiceRow(
	scope: Scope,
	window: PeriodWindow,
	draft: ComputedInvoice,
	now: string,
	terms: IssueTerms,
): Omit<InvoiceRow, "number"> {
	return {
		...rowOfDraft(scope, window, draft),
		status: terms.status,
		issuedAt: now,
		paidAt: terms.paidAt,
		voidedAt: null,
		createdAt: now,
		dueAt: terms.dueAt,
		billTo: terms.billTo,
		creditsApplied: terms.creditsApplied.toString(),
		creditedMinor: 0,
		creditedToInvoice: "0",
	};
}

/** What a generate run stores for one period: as invoices (storeInvoices) or as drafts (storeDrafts). */
export interface PeriodDrafts {
	db: Db;
	scope: Scope;
	window: PeriodWindow;
	drafts: readonly ComputedInvoice[];
	now: string;
	mark?: WriteMark;
}

/**
 * The stored invoices of `drafts`, in their order, without those a concurrent generator stored first. One D1
 * batch for the group; one batch per draft only after losing a race.
 */
export async function storeInvoices(batch: PeriodDrafts): Promise<InvoiceView[]> {
	if (batch.drafts.length === 0) return [];
	for (let attempt = 1; attempt <= CREDIT_RACE_ATTEMPTS; attempt++) {
		try {
			return await storeIssued(batch);
		} catch (error) {
			if (!isCreditOverdrawn(error)) throw error;
		}
	}
	throw contention("the prepaid credits of these accounts");
}

/** Credits are planned again after losing a race for them; a few rounds settle any realistic contention. */
const CREDIT_RACE_ATTEMPTS = 5;

async function storeIssued({ db, scope, window, drafts, now, mark }: PeriodDrafts): Promise<InvoiceView[]> {
	const d1 = db.$client;
	if (drafts.length === 1) {
		const stored = await storeInvoice(db, scope, window, drafts[0] as ComputedInvoice, now, undefined, mark);
		return stored === null ? [] : [stored];
	}
	const terms = await prepareIssue(d1, scope, drafts, now, window.period);
	try {
		const issued = drafts.map((draft, i) => ({ draft, terms: terms[i] as IssueTerms }));
		return await insertInvoices(d1, scope, issued, window, now, mark);
	} catch (error) {
		if (!isUniqueViolation(error)) throw error;
	}
	// The group's terms still hold: its batch rolled back, so none of the credits it planned were spent.
	const stored: InvoiceView[] = [];
	for (const [i, draft] of drafts.entries()) {
		const invoice = await storeInvoice(db, scope, window, draft, now, terms[i], mark);
		if (invoice !== null) stored.push(invoice);
	}
	return stored;
}

/**
 * The one way invoices are stored, one or many: one atomic batch in which the counter takes the whole block and
 * each invoice the number of its place, with its lines, the credits it spends and its outbox events.
 */
async function insertInvoices(
	d1: D1Database,
	scope: Scope,
	issued: readonly { draft: ComputedInvoice; terms: IssueTerms }[],
	window: PeriodWindow,
	now: string,
	mark?: WriteMark,
): Promise<InvoiceView[]> {
	const invoices = issued.map(({ draft, terms }) => ({
		row: invoiceRow(scope, window, draft, now, terms),
		lines: storedLines(draft),
		terms,
	}));
	const environment = scope.environment;
	const reserve = statement(
		d1,
		`INSERT INTO invoice_counters (environment, last_number) VALUES (?1, ?2)
		ON CONFLICT (environment) DO UPDATE SET last_number = last_number + excluded.last_number`,
		environment,
		invoices.length,
	);
	const invoiceRows = invoices.map(({ row, terms }, place) =>
		JSON.stringify({
			id: row.id,
			place,
			account_id: row.accountId,
			subscription_id: row.subscriptionId,
			rate_plan_id: row.ratePlanId,
			billing_period: row.billingPeriod,
			sequence: row.sequence,
			kind: row.kind,
			currency: row.currency,
			amount: row.amount,
			status: row.status,
			paid_at: row.paidAt,
			due_at: row.dueAt,
			bill_to: JSON.stringify(row.billTo),
			credits_applied: row.creditsApplied,
			payer_account_id: terms.payerAccountId,
			threshold_sequence: row.thresholdSequence,
			discount_credited: row.discountCredited,
			exchange_rate: row.exchangeRate === null ? null : JSON.stringify(row.exchangeRate),
		}),
	);
	// The block is last_number − n + 1 … last_number, read after the reservation in the same transaction.
	const insertInvoices = chunkJsonRows(invoiceRows).map((group) =>
		statement(
			d1,
			`INSERT INTO invoices (id, environment, number, account_id, subscription_id, rate_plan_id, billing_period,
				sequence, kind, status, currency, amount, issued_at, paid_at, voided_at, created_at, due_at, bill_to,
				credits_applied, payer_account_id, threshold_sequence, discount_credited, exchange_rate)
			SELECT i.value ->> '$.id', ?1,
				(SELECT last_number FROM invoice_counters WHERE environment = ?1) - ?2 + 1 + (i.value ->> '$.place'),
				i.value ->> '$.account_id', i.value ->> '$.subscription_id', i.value ->> '$.rate_plan_id',
				i.value ->> '$.billing_period', i.value ->> '$.sequence', i.value ->> '$.kind', i.value ->> '$.status',
				i.value ->> '$.currency', i.value ->> '$.amount', ?3, i.value ->> '$.paid_at', NULL, ?3,
				i.value ->> '$.due_at', i.value ->> '$.bill_to', i.value ->> '$.credits_applied',
				i.value ->> '$.payer_account_id', i.value ->> '$.threshold_sequence', i.value ->> '$.discount_credited',
				i.value ->> '$.exchange_rate'
			FROM json_each(?4) AS i WHERE true
			RETURNING id, number`,
			environment,
			invoices.length,
			now,
			`[${group.join(",")}]`,
		),
	);
	const lineRows = invoices.flatMap(({ row, lines }) =>
		lines.map((line) => JSON.stringify({ invoice_id: row.id, ...line })),
	);
	const insertLines = chunkJsonRows(lineRows).map((group) =>
		statement(
			d1,
			`INSERT INTO invoice_lines (invoice_id, position, environment, metric, description, quantity, amount,
				agent_shares, original_amount, original_currency, part_starts_at)
			SELECT l.value ->> '$.invoice_id', l.value ->> '$.position', ?1, l.value ->> '$.metric',
				l.value ->> '$.description', l.value ->> '$.quantity', l.value ->> '$.amount', l.value ->> '$.agent_shares',
				l.value ->> '$.original_amount', l.value ->> '$.original_currency', l.value ->> '$.part_starts_at'
			FROM json_each(?2) AS l`,
			environment,
			`[${group.join(",")}]`,
		),
	);
	const spendCredits = ledgerInsert(
		d1,
		environment,
		invoices.flatMap(({ row, terms }) => applicationRows(row.id, row.accountId, terms)),
		now,
	);
	const discountCredits = issued.flatMap(({ draft }, i) =>
		discountCreditInsert(d1, environment, window, draft, invoices[i]?.row.id as string, now),
	);
	const announce = outboxInsertMany(
		d1,
		environment,
		invoices.flatMap(({ row }) =>
			issuedEvents(row).map(([event, data]) => ({
				id: newId("evt"),
				event,
				data: JSON.stringify(data),
			})),
		),
		now,
	);
	const record = auditInserts(
		d1,
		scope,
		invoices.map(({ row }) => ({
			action: "invoice.created",
			resourceId: row.id,
			changes: created({
				account_id: row.accountId,
				subscription_id: row.subscriptionId,
				billing_period: row.billingPeriod,
				kind: row.kind,
				status: row.status,
				currency: row.currency,
				amount: Decimal.from(row.amount).toNumber(),
				credits_applied: Decimal.from(row.creditsApplied).toNumber(),
			}),
		})),
	);
	const ids = invoices.map(({ row }) => row.id);
	// What the answer shows of each collection is what the issuing batch stored (a Stripe account's: pending).
	const collectionReads = readCollections(d1, environment, ids);
	const results = await d1.batch([
		reserve,
		...insertInvoices,
		...insertLines,
		...spendCredits,
		...discountCredits,
		...announce,
		...record,
		...markStatements(mark, d1, ids),
		...collectionReads,
	]);
	const collections = collectionsFrom(results.slice(results.length - collectionReads.length));
	const numbers = new Map<string, number>();
	for (const result of results.slice(1, 1 + insertInvoices.length)) {
		for (const { id, number } of returned<{ id: string; number: number }>(result)) numbers.set(id, number);
	}
	return invoices.map(({ row, lines, terms }) => {
		const number = numbers.get(row.id);
		if (number === undefined) throw new Error(`invoice ${row.id} was stored without a number`);
		return invoiceView(
			{ ...row, number, payerAccountId: terms.payerAccountId, ...collections.get(row.id) },
			lines.map(lineOfStored),
		);
	});
}

/** invoice.created, and invoice.paid after it when nothing is left to pay (docs/billing.md#prepaid-credits). */
function issuedEvents(row: Omit<InvoiceRow, "number">): [WebhookEventKind, Record<string, unknown>][] {
	const data = invoiceEventData({ ...row, number: 0 });
	const events: [WebhookEventKind, Record<string, unknown>][] = [["invoice.created", data]];
	if (row.status === "paid") events.push(["invoice.paid", { ...data, paid_at: row.paidAt }]);
	return events;
}

/** The stored invoice, or null when a concurrent generator stored this subscription's invoice first. */
export async function storeInvoice(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	draft: ComputedInvoice,
	now: string,
	planned?: IssueTerms,
	mark?: WriteMark,
): Promise<InvoiceView | null> {
	const d1 = db.$client;
	const terms = planned ?? ((await prepareIssue(d1, scope, [draft], now, window.period))[0] as IssueTerms);
	try {
		const [stored] = await insertInvoices(d1, scope, [{ draft, terms }], window, now, mark);
		return stored ?? null;
	} catch (error) {
		if (isUniqueViolation(error)) return null;
		throw error;
	}
}
