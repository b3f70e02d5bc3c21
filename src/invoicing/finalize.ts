/**
 * Finalizing a draft invoice (docs/credit-notes.md#draft-invoices): by hand, or by the cron once the account's
 * grace days have passed since the period ended. The draft is first brought up to date with the period's usage
 * (the same generation as POST /v1/invoices/generate), then issued as any invoice is: the next number,
 * issued_at, due date and bill-to, prepaid credits applied, invoice.created with the status after credits (and
 * invoice.paid when credits paid it). One guarded batch: a draft finalized, discarded or changed meanwhile
 * makes it roll back whole.
 */

import { auditAfterFromBatch, auditInsert } from "../audit/record";
import { isCreditOverdrawn, ledgerInsert } from "../credits/ledger";
import { abortUnlessChanged, isAbortedByGuard, statement } from "../db/batch";
import { database } from "../db/client";
import type { Scope } from "../db/scope";
import type { WriteMark } from "../db/write-once";
import { markStatements } from "../db/write-once";
import type { Env, Environment } from "../env";
import { Decimal } from "../lib/decimal";
import { conflict, contention } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { dispatchOutbox } from "../webhooks/dispatch";
import { outboxInsertMany } from "../webhooks/outbox";
import type { ComputedInvoice } from "./computed";
import { discountCreditStatements, draftDiscountCredit } from "./finalize-discount";
import { generateInvoicesForPeriod } from "./generate";
import {
	getInvoice,
	getInvoiceRow,
	type InvoiceRow,
	type InvoiceView,
	invoiceEventData,
	invoiceNumberSql,
} from "./invoices";
import { applicationRows, prepareIssue } from "./issue";

const ATTEMPTS = 5;

function notDraft(row: InvoiceRow): Error {
	return conflict(`Invoice ${row.id} is ${row.status}; only a draft invoice can be finalized.`);
}

export async function finalizeInvoice({
	env,
	scope,
	id,
	mark,
}: {
	env: Env;
	scope: Scope;
	id: string;
	mark?: WriteMark;
}): Promise<InvoiceView> {
	const db = database(env.DB);
	const row = await getInvoiceRow({ db, scope, id });
	if (row.status !== "draft") throw notDraft(row);
	// Late usage of the period goes on the draft before it is issued.
	await generateInvoicesForPeriod({ env, scope, billingPeriod: row.billingPeriod, accountId: row.accountId });
	for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
		const now = nowIso();
		const current = await getInvoiceRow({ db, scope, id });
		if (current.status !== "draft") throw notDraft(current);
		try {
			const discountCredit = discountCreditStatements(
				db.$client,
				scope,
				current,
				await draftDiscountCredit(db, scope, current),
				now,
			);
			await issueDraft(db.$client, scope, current, now, mark, discountCredit);
			return getInvoice({ db, scope, id });
		} catch (error) {
			if (!(isAbortedByGuard(error) || isCreditOverdrawn(error))) throw error;
		}
	}
	throw contention(`draft invoice ${id}`);
}

async function issueDraft(
	d1: D1Database,
	scope: Scope,
	draft: InvoiceRow,
	now: string,
	mark: WriteMark | undefined,
	discountCredit: D1PreparedStatement[] = [],
): Promise<void> {
	const amount = Decimal.from(draft.amount);
	const [terms] = await prepareIssue(
		d1,
		scope,
		[{ accountId: draft.accountId, amount, currency: draft.currency } as ComputedInvoice],
		now,
		draft.billingPeriod,
	);
	if (!terms) throw new Error(`no terms for draft ${draft.id}`);
	const environment = scope.environment;
	const issued: InvoiceRow = {
		...draft,
		status: terms.status,
		paidAt: terms.paidAt,
		issuedAt: now,
		dueAt: terms.dueAt,
		billTo: terms.billTo,
		creditsApplied: terms.creditsApplied.toString(),
	};
	const data = invoiceEventData(issued);
	const events = [{ id: newId("evt"), event: "invoice.created", data: JSON.stringify(data) }];
	if (terms.status === "paid") {
		events.push({ id: newId("evt"), event: "invoice.paid", data: JSON.stringify({ ...data, paid_at: now }) });
	}
	await d1.batch([
		statement(
			d1,
			`INSERT INTO invoice_counters (environment, last_number) VALUES (?1, 1)
			ON CONFLICT (environment) DO UPDATE SET last_number = last_number + 1`,
			environment,
		),
		statement(
			d1,
			`UPDATE invoices SET number = (SELECT last_number FROM invoice_counters WHERE environment = ?1),
				status = ?3, paid_at = ?4, issued_at = ?5, due_at = ?6, bill_to = ?7, credits_applied = ?8,
				payer_account_id = ?10
			WHERE environment = ?1 AND id = ?2 AND status = 'draft' AND amount = ?9`,
			environment,
			draft.id,
			terms.status,
			terms.paidAt,
			now,
			terms.dueAt,
			JSON.stringify(terms.billTo),
			terms.creditsApplied.toString(),
			draft.amount,
			terms.payerAccountId,
		),
		abortUnlessChanged(d1),
		...discountCredit,
		...ledgerInsert(d1, environment, applicationRows(draft.id, draft.accountId, terms), now),
		...outboxInsertMany(d1, environment, events, now),
		auditInsert(d1, scope, {
			action: "invoice.finalized",
			resourceId: draft.id,
			changes: {
				status: ["draft", terms.status],
				issued_at: [null, now],
				due_at: [null, terms.dueAt],
				credits_applied: [null, terms.creditsApplied.toNumber()],
			},
		}),
		// The number is drawn inside this batch: the record takes it from the invoice just numbered.
		auditAfterFromBatch(
			d1,
			"number",
			`SELECT ${invoiceNumberSql("number")} FROM invoices WHERE environment = ?2 AND id = ?3`,
			environment,
			draft.id,
		),
		...markStatements(mark, d1, [draft.id]),
	]);
}

/** Drafts finalized per cron run at most; the rest wait for the next run (every few minutes). */
const DRAFTS_PER_RUN = 25;

/**
 * The cron's part: finalizes drafts whose grace has passed — the account's grace days after the later of the
 * period's end and the draft's creation. Returns how many were finalized.
 */
export async function finalizeDueDrafts(env: Env, now: Date): Promise<number> {
	const { results } = await env.DB.prepare(
		`SELECT i.environment, i.id FROM invoices i JOIN accounts a ON a.id = i.account_id
		WHERE i.status = 'draft'
			AND MAX(julianday(i.created_at), julianday(date(i.billing_period || '-01', '+1 month'))) + a.invoice_grace_days
				<= julianday(?1)
		ORDER BY i.created_at, i.id LIMIT ?2`,
	)
		.bind(now.toISOString(), DRAFTS_PER_RUN)
		.all<{ environment: Environment; id: string }>();
	let finalized = 0;
	for (const draft of results) {
		try {
			await finalizeInvoice({ env, scope: { environment: draft.environment }, id: draft.id });
			finalized++;
		} catch (error) {
			console.error(JSON.stringify({ at: "finalize-drafts", invoice: draft.id, error: String(error) }));
		}
	}
	if (finalized > 0) await dispatchOutbox(env);
	return finalized;
}
