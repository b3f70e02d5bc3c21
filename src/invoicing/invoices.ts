/**
 * Invoices as the API shows them (docs/billing.md#invoices), and reading them. Amounts and quantities are exact decimal
 * strings in D1 and become JSON numbers only here, at the edge.
 */
import { and, asc, desc, eq, getTableColumns, inArray, lt, ne, not, or, type SQL, sql } from "drizzle-orm";
import { fromMinor } from "../credits/wallet";
import { type ById, getInScope, type InScope, type Listing } from "../db/rows";
import { type BillTo, creditNotes, invoiceLines, invoicePayers, invoices, payments } from "../db/schema";
import { inScope } from "../db/scope";
import { invoiceRateJson } from "../exchange-rates/invoice-rate";
import { Decimal } from "../lib/decimal";
import { notFound } from "../lib/errors";
import { periodBounds } from "../lib/time";
import { DISCOUNT_METRIC } from "../pricing/period-discount";
import {
	type CollectionRow,
	type CollectionView,
	collectionColumns,
	collectionView,
} from "./collection-view";
import { type PayerRow, payerColumns } from "./payer";

export type InvoiceRow = typeof invoices.$inferSelect;
export type InvoiceStatus = InvoiceRow["status"];

export interface InvoiceLineView {
	metric: string;
	/** "flat" on a discount line: what simulate and real-time usage call it too. */
	model?: "flat";
	description: string;
	quantity: number;
	amount: number;
	/** Before conversion (docs/currencies.md): the amount and currency it was rated in; else amount and currency. */
	original_amount: number;
	original_currency: string;
}

export interface InvoiceView {
	id: string;
	/** null while a draft, and for a draft that was discarded. */
	number: string | null;
	account_id: string;
	/** Who pays it (docs/account-hierarchies.md): the parent under billing 'parent', else account_id. */
	payer_account_id: string;
	subscription_id: string;
	rate_plan_id: string;
	billing_period: string;
	period_start: string;
	period_end: string;
	kind: "regular" | "supplementary" | "threshold";
	status: InvoiceStatus;
	currency: string;
	/** The stored rate its lines were converted at, as created; null when it needed no conversion. */
	exchange_rate: ReturnType<typeof invoiceRateJson>;
	line_items: InvoiceLineView[];
	amount: number;
	issued_at: string;
	paid_at: string | null;
	voided_at: string | null;
	created_at: string;
	due_at: string;
	bill_to: BillTo;
	credits_applied: number;
	/** amount − credits_applied − what credit notes took off what was still due. */
	amount_due: number;
	/** The sum of its payments, refunds negative. */
	amount_paid: number;
	/** amount_due − amount_paid − what credit notes refunded, never below 0. */
	amount_remaining: number;
	payments: InvoicePaymentView[];
	/** The sum of its credit notes' amounts (docs/credit-notes.md). */
	amount_credited: number;
	/** Its credit notes' ids, oldest first. */
	credit_notes: string[];
	/** How it is being collected (docs/payments.md). */
	collection: CollectionView;
}

export interface InvoicePaymentView {
	id: string;
	kind: "payment" | "refund";
	amount: number;
	reference: string | null;
	provider: "manual" | "stripe";
	paid_at: string;
}

interface StoredPayment {
	id: string;
	invoiceId: string;
	kind: "payment" | "refund";
	amount: string;
	reference: string | null;
	provider?: "manual" | "stripe";
	createdAt: string;
}

interface StoredLine {
	metric: string;
	description: string;
	quantity: string;
	amount: string;
	originalAmount?: string | null;
	originalCurrency?: string | null;
}

/** "INV-000042": sequential per environment, six digits until it needs more. */
export function invoiceNumber(number: number): string {
	return `INV-${String(number).padStart(6, "0")}`;
}

/** invoiceNumber in SQL, of an integer column or expression, for a batch that draws the number itself. */
export const invoiceNumberSql = (number: string) => `'INV-' || printf('%06d', ${number})`;

export function invoiceView(
	row: InvoiceRow & Partial<CollectionRow> & PayerRow,
	lines: readonly StoredLine[],
	paid: readonly StoredPayment[] = [],
	creditNoteIds: readonly string[] = [],
): InvoiceView {
	const { start, end } = periodBounds(row.billingPeriod);
	const amount = Decimal.from(row.amount);
	const creditsApplied = Decimal.from(row.creditsApplied);
	const amountDue = amount.sub(creditsApplied).sub(Decimal.from(row.creditedToInvoice));
	const amountPaid = Decimal.sum(paid.map((payment) => Decimal.from(payment.amount)));
	const refunded = Decimal.sum(
		paid
			.filter((payment) => payment.kind === "refund")
			.map((payment) => Decimal.from(payment.amount).negate()),
	);
	return {
		id: row.id,
		number: row.number > 0 ? invoiceNumber(row.number) : null,
		account_id: row.accountId,
		payer_account_id: row.payerAccountId ?? row.accountId,
		subscription_id: row.subscriptionId,
		rate_plan_id: row.ratePlanId,
		billing_period: row.billingPeriod,
		period_start: start,
		period_end: end,
		kind: row.kind,
		status: row.status,
		currency: row.currency,
		exchange_rate: invoiceRateJson(row.exchangeRate),
		line_items: lines.map((line) => ({
			metric: line.metric,
			...(line.metric === DISCOUNT_METRIC ? { model: "flat" as const } : {}),
			description: line.description,
			quantity: Decimal.from(line.quantity).toNumber(),
			amount: Decimal.from(line.amount).toNumber(),
			original_amount: Decimal.from(line.originalAmount ?? line.amount).toNumber(),
			original_currency: line.originalCurrency ?? row.currency,
		})),
		amount: amount.toNumber(),
		issued_at: row.issuedAt,
		paid_at: row.paidAt,
		voided_at: row.voidedAt,
		created_at: row.createdAt,
		due_at: row.dueAt ?? row.issuedAt,
		bill_to: row.billTo ?? { name: "", email: "", billing_address: null },
		credits_applied: creditsApplied.toNumber(),
		amount_due: amountDue.toNumber(),
		amount_paid: amountPaid.toNumber(),
		amount_remaining: Decimal.max(Decimal.ZERO, amountDue.sub(amountPaid).sub(refunded)).toNumber(),
		payments: paid.map((payment) => ({
			id: payment.id,
			kind: payment.kind,
			amount: Decimal.from(payment.amount).toNumber(),
			reference: payment.reference,
			provider: payment.provider ?? "manual",
			paid_at: payment.createdAt,
		})),
		amount_credited: fromMinor(BigInt(row.creditedMinor), row.currency).toNumber(),
		credit_notes: [...creditNoteIds],
		collection: collectionView(row),
	};
}

/**
 * The `data` of invoice.created and invoice.paid (docs/webhooks.md#what-a-delivery-looks-like). Its `collection`
 * is added as the outbox row is stored (migration 0022's trigger), from what the same batch stored.
 */
export function invoiceEventData(row: InvoiceRow): Record<string, unknown> {
	return {
		invoice_id: row.id,
		account_id: row.accountId,
		subscription_id: row.subscriptionId,
		billing_period: row.billingPeriod,
		amount: Decimal.from(row.amount).toNumber(),
		currency: row.currency,
		status: row.status,
	};
}

const lineColumns = {
	invoiceId: invoiceLines.invoiceId,
	metric: invoiceLines.metric,
	description: invoiceLines.description,
	quantity: invoiceLines.quantity,
	amount: invoiceLines.amount,
	originalAmount: invoiceLines.originalAmount,
	originalCurrency: invoiceLines.originalCurrency,
};

const paymentColumns = {
	id: payments.id,
	invoiceId: payments.invoiceId,
	kind: payments.kind,
	amount: payments.amount,
	reference: payments.reference,
	provider: payments.provider,
	createdAt: payments.createdAt,
};

const creditNoteColumns = { id: creditNotes.id, invoiceId: creditNotes.invoiceId };
const invoiceColumns = { ...getTableColumns(invoices), ...collectionColumns, ...payerColumns };

export async function getInvoiceRow({ db, scope, id }: ById): Promise<InvoiceRow> {
	return getInScope(db, scope, invoices, "invoice", id);
}

export async function getInvoice({ db, scope, id }: ById): Promise<InvoiceView> {
	const [rows, lines, paid, notes] = await db.batch([
		db
			.select(invoiceColumns)
			.from(invoices)
			.where(inScope(scope, invoices, eq(invoices.id, id))),
		db
			.select(lineColumns)
			.from(invoiceLines)
			.where(inScope(scope, invoiceLines, eq(invoiceLines.invoiceId, id)))
			.orderBy(asc(invoiceLines.position)),
		db
			.select(paymentColumns)
			.from(payments)
			.where(inScope(scope, payments, eq(payments.invoiceId, id)))
			.orderBy(asc(payments.createdAt), asc(payments.id)),
		db
			.select(creditNoteColumns)
			.from(creditNotes)
			.where(inScope(scope, creditNotes, eq(creditNotes.invoiceId, id)))
			.orderBy(asc(creditNotes.number)),
	]);
	const [row] = rows;
	if (!row) throw notFound("invoice", id);
	return invoiceView(
		row,
		lines,
		paid,
		notes.map((note) => note.id),
	);
}

export interface InvoiceFilters {
	account_id?: string;
	/** Only the invoices this account pays (docs/account-hierarchies.md). */
	payer_account_id?: string;
	/** The account's own invoices and those it pays: what its portal shows. */
	account_or_payer_id?: string;
	subscription_id?: string;
	status?: InvoiceStatus;
	billing_period?: string;
	/** true: only invoices issued (no drafts), for the customer's eyes. */
	issued?: boolean;
	/** true: open invoices past their due date (at `now`); false: every other invoice. */
	overdue?: boolean;
	now?: string;
	/** Only these (at most 50: each id is a bound parameter). */
	ids?: readonly string[];
}

/** These invoices, in this order (the answer of a generation repeated after a crash, db/write-once.ts). */
export async function getInvoices({
	db,
	scope,
	ids,
}: InScope & { ids: readonly string[] }): Promise<InvoiceView[]> {
	const found = new Map<string, InvoiceView>();
	for (let i = 0; i < ids.length; i += 50) {
		const chunk = ids.slice(i, i + 50);
		const { items } = await listInvoices({ db, scope, filters: { ids: chunk }, limit: 100, offset: 0 });
		for (const invoice of items) found.set(invoice.id, invoice);
	}
	return ids.flatMap((id) => found.get(id) ?? []);
}

/** One page of invoices, newest first, with the line items of that page read in the same round trip. */
export async function listInvoices({
	db,
	scope,
	filters,
	limit,
	offset,
}: Listing<InvoiceFilters>): Promise<{ items: InvoiceView[]; total: number }> {
	const where = inScope(
		scope,
		invoices,
		filters.account_id === undefined ? undefined : eq(invoices.accountId, filters.account_id),
		filters.payer_account_id === undefined
			? undefined
			: eq(invoicePayers.payerAccountId, filters.payer_account_id),
		filters.account_or_payer_id === undefined
			? undefined
			: or(
					eq(invoices.accountId, filters.account_or_payer_id),
					eq(invoicePayers.payerAccountId, filters.account_or_payer_id),
				),
		filters.subscription_id === undefined ? undefined : eq(invoices.subscriptionId, filters.subscription_id),
		filters.status === undefined ? undefined : eq(invoices.status, filters.status),
		filters.billing_period === undefined ? undefined : eq(invoices.billingPeriod, filters.billing_period),
		overdueCondition(filters.overdue, filters.now ?? new Date().toISOString()),
		filters.issued === true ? ne(invoices.status, "draft") : undefined,
		filters.ids === undefined ? undefined : inArray(invoices.id, [...filters.ids]),
	);
	const newestFirst = [desc(invoices.createdAt), desc(invoices.id)] as const;
	const pageIds = db
		.select({ id: invoices.id })
		.from(invoices)
		.where(where)
		.orderBy(...newestFirst)
		.limit(limit)
		.offset(offset);
	const [rows, [count], lines, paid, notes] = await db.batch([
		db
			.select(invoiceColumns)
			.from(invoices)
			.where(where)
			.orderBy(...newestFirst)
			.limit(limit)
			.offset(offset),
		db.select({ n: sql<number>`count(*)` }).from(invoices).where(where),
		db
			.select(lineColumns)
			.from(invoiceLines)
			.where(and(inScope(scope, invoiceLines), inArray(invoiceLines.invoiceId, pageIds)))
			.orderBy(asc(invoiceLines.invoiceId), asc(invoiceLines.position)),
		db
			.select(paymentColumns)
			.from(payments)
			.where(and(inScope(scope, payments), inArray(payments.invoiceId, pageIds)))
			.orderBy(asc(payments.createdAt), asc(payments.id)),
		db
			.select(creditNoteColumns)
			.from(creditNotes)
			.where(and(inScope(scope, creditNotes), inArray(creditNotes.invoiceId, pageIds)))
			.orderBy(asc(creditNotes.number)),
	]);
	const notesOf = new Map<string, string[]>();
	for (const note of notes) notesOf.set(note.invoiceId, [...(notesOf.get(note.invoiceId) ?? []), note.id]);
	const paymentsOf = new Map<string, StoredPayment[]>();
	for (const payment of paid)
		paymentsOf.set(payment.invoiceId, [...(paymentsOf.get(payment.invoiceId) ?? []), payment]);
	const linesOf = new Map<string, StoredLine[]>();
	for (const line of lines) {
		const list = linesOf.get(line.invoiceId);
		if (list) list.push(line);
		else linesOf.set(line.invoiceId, [line]);
	}
	return {
		items: rows.map((row) =>
			invoiceView(row, linesOf.get(row.id) ?? [], paymentsOf.get(row.id) ?? [], notesOf.get(row.id) ?? []),
		),
		total: count?.n ?? 0,
	};
}

/** Overdue (docs/billing.md#invoice-documents-and-payments): still open after its due date. */
function overdueCondition(overdue: boolean | undefined, now: string): SQL | undefined {
	if (overdue === undefined) return undefined;
	const isOverdue = and(eq(invoices.status, "open"), lt(invoices.dueAt, now)) as SQL;
	return overdue ? isOverdue : not(isOverdue);
}
