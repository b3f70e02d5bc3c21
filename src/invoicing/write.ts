/**
 * Storing invoices. A group of drafts is stored by one D1 batch (atomic) of a few statements, whatever its size:
 * it reserves a block of numbers with one counter update, inserts the invoices, their lines and their
 * invoice.created outbox rows, rows travelling as JSON parameters (json_each).
 *
 * Concurrency is settled by constraints, not locks: two generators that drafted the same subscription and
 * period use the same sequence, so the unique (subscription_id, billing_period, sequence) index fails the
 * loser's whole batch — counter update included, so numbers stay gapless. The loser then stores its drafts one
 * by one (storeInvoice), each in its own batch, and skips those the winner stored.
 */
import { sql } from "drizzle-orm";
import { type Db, isUniqueViolation } from "../db/client";
import { invoiceCounters, invoiceLines, invoices } from "../db/schema";
import type { Scope } from "../db/scope";
import { newId } from "../lib/ids";
import { chunkJsonRows, outboxInsertMany, returned, statement } from "../metering/d1-batch";
import { outboxInsert } from "../webhooks/outbox";
import type { InvoiceDraft } from "./draft";
import { type InvoiceRow, type InvoiceView, invoiceEventData, invoiceView } from "./invoices";
import type { PeriodWindow } from "./period";

type StoredLine = ReturnType<typeof storedLines>[number];

function storedLines(draft: InvoiceDraft) {
	return draft.lines.map((line, position) => ({
		position,
		metric: line.metric,
		description: line.description,
		quantity: line.quantity.toString(),
		amount: line.amount.toString(),
		agent_shares: line.agentShares === null ? null : JSON.stringify(line.agentShares),
	}));
}

function invoiceRow(
	scope: Scope,
	window: PeriodWindow,
	draft: InvoiceDraft,
	now: string,
): Omit<InvoiceRow, "number"> {
	return {
		id: newId("inv"),
		environment: scope.environment,
		accountId: draft.accountId,
		subscriptionId: draft.subscriptionId,
		ratePlanId: draft.ratePlanId,
		billingPeriod: window.period,
		sequence: draft.sequence,
		kind: draft.kind,
		status: "open",
		currency: draft.currency,
		amount: draft.amount.toString(),
		issuedAt: now,
		paidAt: null,
		voidedAt: null,
		createdAt: now,
	};
}

/**
 * The stored invoices of `drafts`, in their order, without those a concurrent generator stored first. One D1
 * batch for the group; one batch per draft only after losing a race.
 */
export async function storeInvoices(
	db: Db,
	d1: D1Database,
	scope: Scope,
	window: PeriodWindow,
	drafts: readonly InvoiceDraft[],
	now: string,
): Promise<InvoiceView[]> {
	if (drafts.length === 0) return [];
	if (drafts.length === 1) {
		const stored = await storeInvoice(db, scope, window, drafts[0] as InvoiceDraft, now);
		return stored === null ? [] : [stored];
	}
	const invoices = drafts.map((draft) => ({
		row: invoiceRow(scope, window, draft, now),
		lines: storedLines(draft),
	}));
	try {
		const numbers = await insertGroup(d1, scope, invoices, now);
		return invoices.map(({ row, lines }) => {
			const number = numbers.get(row.id);
			if (number === undefined) throw new Error(`invoice ${row.id} was stored without a number`);
			return invoiceView({ ...row, number }, lines);
		});
	} catch (error) {
		if (!isUniqueViolation(error)) throw error;
	}
	const stored: InvoiceView[] = [];
	for (const draft of drafts) {
		const invoice = await storeInvoice(db, scope, window, draft, now);
		if (invoice !== null) stored.push(invoice);
	}
	return stored;
}

/** One atomic batch: the counter takes the whole block, each invoice the number of its place in `invoices`. */
async function insertGroup(
	d1: D1Database,
	scope: Scope,
	invoices: { row: Omit<InvoiceRow, "number">; lines: StoredLine[] }[],
	now: string,
): Promise<Map<string, number>> {
	const environment = scope.environment;
	const reserve = statement(
		d1,
		`INSERT INTO invoice_counters (environment, last_number) VALUES (?1, ?2)
		ON CONFLICT (environment) DO UPDATE SET last_number = last_number + excluded.last_number`,
		environment,
		invoices.length,
	);
	const invoiceRows = invoices.map(({ row }, place) =>
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
		}),
	);
	// The block is last_number − n + 1 … last_number, read after the reservation in the same transaction.
	const insertInvoices = chunkJsonRows(invoiceRows).map((group) =>
		statement(
			d1,
			`INSERT INTO invoices (id, environment, number, account_id, subscription_id, rate_plan_id, billing_period,
				sequence, kind, status, currency, amount, issued_at, paid_at, voided_at, created_at)
			SELECT i.value ->> '$.id', ?1,
				(SELECT last_number FROM invoice_counters WHERE environment = ?1) - ?2 + 1 + (i.value ->> '$.place'),
				i.value ->> '$.account_id', i.value ->> '$.subscription_id', i.value ->> '$.rate_plan_id',
				i.value ->> '$.billing_period', i.value ->> '$.sequence', i.value ->> '$.kind', 'open',
				i.value ->> '$.currency', i.value ->> '$.amount', ?3, NULL, NULL, ?3
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
				agent_shares)
			SELECT l.value ->> '$.invoice_id', l.value ->> '$.position', ?1, l.value ->> '$.metric',
				l.value ->> '$.description', l.value ->> '$.quantity', l.value ->> '$.amount', l.value ->> '$.agent_shares'
			FROM json_each(?2) AS l`,
			environment,
			`[${group.join(",")}]`,
		),
	);
	const announce = outboxInsertMany(
		d1,
		environment,
		invoices.map(({ row }) => ({
			id: newId("evt"),
			event: "invoice.created",
			data: JSON.stringify(invoiceEventData({ ...row, number: 0 })),
		})),
		now,
	);
	const results = await d1.batch([reserve, ...insertInvoices, ...insertLines, ...announce]);
	const numbers = new Map<string, number>();
	for (const result of results.slice(1, 1 + insertInvoices.length)) {
		for (const { id, number } of returned<{ id: string; number: number }>(result)) numbers.set(id, number);
	}
	return numbers;
}

/** The stored invoice, or null when a concurrent generator stored this subscription's invoice first. */
export async function storeInvoice(
	db: Db,
	scope: Scope,
	window: PeriodWindow,
	draft: InvoiceDraft,
	now: string,
): Promise<InvoiceView | null> {
	const lines = storedLines(draft);
	const row = invoiceRow(scope, window, draft, now);
	const id = row.id;
	const takeNumber = db
		.insert(invoiceCounters)
		.values({ environment: scope.environment, lastNumber: 1 })
		.onConflictDoUpdate({
			target: invoiceCounters.environment,
			set: { lastNumber: sql`${invoiceCounters.lastNumber} + 1` },
		});
	const insertInvoice = db
		.insert(invoices)
		.values({
			...row,
			number: sql`(SELECT ${invoiceCounters.lastNumber} FROM ${invoiceCounters} WHERE ${invoiceCounters.environment} = ${scope.environment})`,
		})
		.returning({ number: invoices.number });
	// One JSON parameter for all lines keeps the statement far below D1's 100 bound parameters. The selected
	// columns follow the table's column order, which an INSERT … SELECT of drizzle requires.
	const insertLines = db.insert(invoiceLines).select(sql`
		SELECT ${id}, json_extract(value, '$.position'), ${scope.environment}, json_extract(value, '$.metric'),
			json_extract(value, '$.description'), json_extract(value, '$.quantity'), json_extract(value, '$.amount'),
			json_extract(value, '$.agent_shares')
		FROM json_each(${JSON.stringify(lines)})`);
	const announce = outboxInsert(db, scope, "invoice.created", invoiceEventData({ ...row, number: 0 }));

	try {
		const [, inserted] = await db.batch([takeNumber, insertInvoice, insertLines, announce]);
		const number = inserted[0]?.number;
		if (number === undefined) throw new Error(`invoice ${id} was stored without a number`);
		return invoiceView({ ...row, number }, lines);
	} catch (error) {
		if (isUniqueViolation(error)) return null;
		throw error;
	}
}
