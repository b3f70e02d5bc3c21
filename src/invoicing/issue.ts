/**
 * What an invoice gets when it is issued besides its lines (docs/billing.md#prepaid-credits, docs/billing.md#invoice-documents-and-payments): a due date from the account's net
 * terms, a snapshot of whom it bills, and the prepaid credits that pay it first. Read for a whole group of
 * drafts in one round trip (which also settles grants that expired), planned in memory, written by write.ts in
 * the batch that stores the invoices.
 */

import { type LedgerRow, settleGrants, spendableGrants, spendableGrantsQuery } from "../credits/ledger";
import { type CreditApplication, CreditWallet, fromMinor, toMinor } from "../credits/plan";
import { statement } from "../db/batch";
import type { BillTo } from "../db/schema";
import type { Scope } from "../db/scope";
import type { Decimal } from "../lib/decimal";
import { newId } from "../lib/ids";
import type { InvoiceDraft } from "./draft";

const DAY_MS = 86_400_000;

export interface IssueTerms {
	dueAt: string;
	billTo: BillTo;
	creditsApplied: Decimal;
	/** "paid" when credits (or a zero amount) leave nothing due. */
	status: "open" | "paid";
	paidAt: string | null;
	applications: CreditApplication[];
}

export interface IssuedAccountRow {
	id: string;
	name: string;
	email: string;
	billing_address: string | null;
	net_terms_days: number;
}

/** issued_at plus whole days of terms, in UTC. */
export function dueDate(issuedAt: string, netTermsDays: number): string {
	return new Date(Date.parse(issuedAt) + netTermsDays * DAY_MS).toISOString();
}

/** The terms of each draft, in the drafts' order; credits are spent draft after draft. */
export async function prepareIssue(
	d1: D1Database,
	scope: Scope,
	drafts: readonly InvoiceDraft[],
	now: string,
): Promise<IssueTerms[]> {
	const accountIds = [...new Set(drafts.map((draft) => draft.accountId))];
	const environment = scope.environment;
	const [, accountsRead, grantsRead] = await d1.batch([
		settleGrants(d1, environment, accountIds, now),
		issuedAccountsQuery(d1, scope, accountIds),
		spendableGrantsQuery(d1, environment, accountIds, now),
	]);
	const accounts = new Map(
		((accountsRead?.results ?? []) as unknown as IssuedAccountRow[]).map((row) => [row.id, row]),
	);
	const wallet = new CreditWallet(spendableGrants(grantsRead));
	return drafts.map((draft) => {
		const account = accounts.get(draft.accountId);
		if (!account) throw new Error(`account ${draft.accountId} of a draft invoice does not exist`);
		return issueTermsOf(account, wallet, draft, now);
	});
}

/** The terms of one draft issued `now`: due date, bill-to, and the credits the wallet spends on it. */
export function issueTermsOf(
	account: IssuedAccountRow,
	wallet: CreditWallet,
	draft: Pick<InvoiceDraft, "accountId" | "amount" | "currency">,
	now: string,
): IssueTerms {
	const applications = wallet.spend(draft.accountId, toMinor(draft.amount, draft.currency), draft.currency);
	const creditsApplied = fromMinor(
		applications.reduce((sum, application) => sum + application.amountMinor, 0n),
		draft.currency,
	);
	const settled = draft.amount.sub(creditsApplied).isZero();
	return {
		dueAt: dueDate(now, account.net_terms_days),
		billTo: {
			name: account.name,
			email: account.email,
			billing_address: account.billing_address === null ? null : JSON.parse(account.billing_address),
		},
		creditsApplied,
		status: settled ? "paid" : "open",
		paidAt: settled ? now : null,
		applications,
	};
}

/** The accounts an invoice bills, as issuing reads them. */
export function issuedAccountsQuery(d1: D1Database, scope: Scope, accountIds: readonly string[]) {
	return statement(
		d1,
		`SELECT id, name, email, billing_address, net_terms_days FROM accounts
		WHERE environment = ?1 AND id IN (SELECT value FROM json_each(?2))`,
		scope.environment,
		JSON.stringify(accountIds),
	);
}

/** The ledger rows of an invoice's credit applications. */
export function applicationRows(invoiceId: string, accountId: string, terms: IssueTerms): LedgerRow[] {
	return terms.applications.map((application) => ({
		id: newId("cle"),
		grant_id: application.grantId,
		account_id: accountId,
		kind: "application",
		amount_minor: (-application.amountMinor).toString(),
		invoice_id: invoiceId,
	}));
}
