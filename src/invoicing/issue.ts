/**
 * What an invoice gets when it is issued besides its lines (docs/billing.md#prepaid-credits, docs/billing.md#invoice-documents-and-payments): a due date from the account's net
 * terms, a snapshot of whom it bills, and the prepaid credits that pay it first. Read for a whole group of
 * drafts in one round trip (which also settles grants that expired), planned in memory, written by write.ts in
 * the batch that stores the invoices.
 */

import {
	accountsWithParentsQuery,
	creditSourcesOf,
	type HierarchyAccountRow,
	payerIdOf,
} from "../accounts/payers";
import { type LedgerRow, settleGrants, spendableGrants, spendableGrantsQuery } from "../credits/ledger";
import {
	type CreditApplication,
	type CreditWallet,
	fromMinor,
	toMinor,
	walletByCurrency,
	walletKey,
} from "../credits/wallet";
import { statement } from "../db/batch";
import type { BillTo } from "../db/schema";
import type { Scope } from "../db/scope";
import type { Decimal } from "../lib/decimal";
import { newId } from "../lib/ids";
import type { ComputedInvoice } from "./computed";

const DAY_MS = 86_400_000;

export interface IssueTerms {
	dueAt: string;
	billTo: BillTo;
	creditsApplied: Decimal;
	/** "paid" when credits (or a zero amount) leave nothing due. */
	status: "open" | "paid";
	paidAt: string | null;
	applications: CreditApplication[];
	/** Who pays it (docs/account-hierarchies.md): the parent under billing 'parent', else the account. */
	payerAccountId: string;
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
	drafts: readonly Pick<ComputedInvoice, "accountId" | "amount" | "currency">[],
	now: string,
	period?: string,
	/** false for a preview (the upcoming invoice): read the same terms, settle no expired grant. */
	{ settle = true }: { settle?: boolean } = {},
): Promise<IssueTerms[]> {
	const accountIds = [...new Set(drafts.map((draft) => draft.accountId))];
	const environment = scope.environment;
	const settling = (ids: string[]) => (settle ? [settleGrants(d1, environment, ids, now)] : []);
	const [accountsRead, grantsRead] = (
		await d1.batch([
			...settling(accountIds),
			accountsWithParentsQuery(d1, environment, accountIds),
			spendableGrantsQuery(d1, environment, accountIds, now),
		])
	).slice(-2);
	const accounts = new Map(
		((accountsRead?.results ?? []) as unknown as HierarchyAccountRow[]).map((row) => [row.id, row]),
	);
	const account = (id: string) => {
		const row = accounts.get(id);
		if (!row) throw new Error(`account ${id} of a draft invoice does not exist`);
		return row;
	};
	const grants = spendableGrants(grantsRead);
	// Parents whose credits pay (billing 'parent', use_parent_credits) and that issue nothing themselves here.
	const parents = [...new Set(accountIds.flatMap((id) => creditSourcesOf(account(id))))].filter(
		(id) => !accountIds.includes(id),
	);
	if (parents.length > 0) {
		const parentGrants = await d1.batch([
			...settling(parents),
			spendableGrantsQuery(d1, environment, parents, now),
		]);
		grants.push(...spendableGrants(parentGrants.at(-1)));
	}
	const wallet = walletByCurrency(grants);
	return drafts.map((draft) => {
		const own = account(draft.accountId);
		return issueTermsOf(account(payerIdOf(own)), wallet, draft, now, creditSourcesOf(own), period);
	});
}

/**
 * The terms of one draft issued `now` to `payer` (the account itself, or its parent under billing 'parent'): due
 * date and bill-to, and the credits the wallet (walletByCurrency) spends on it, from the grants in the invoice's
 * currency of each of `sources` in turn (docs/account-hierarchies.md).
 */
export function issueTermsOf(
	payer: IssuedAccountRow,
	wallet: CreditWallet,
	draft: Pick<ComputedInvoice, "accountId" | "amount" | "currency">,
	now: string,
	sources: readonly string[] = [draft.accountId],
	/** The invoice's billing period: a monthly grant, once expired, pays only its own period's. */
	period?: string,
): IssueTerms {
	const invoice = period === undefined ? undefined : { period, issuedAt: now };
	const applications: CreditApplication[] = [];
	let owed = toMinor(draft.amount, draft.currency);
	for (const source of sources) {
		for (const spent of wallet.spend(walletKey(source, draft.currency), owed, invoice)) {
			applications.push({ ...spent, accountId: source });
			owed -= spent.amountMinor;
		}
	}
	const creditsApplied = fromMinor(
		applications.reduce((sum, application) => sum + application.amountMinor, 0n),
		draft.currency,
	);
	const settled = draft.amount.sub(creditsApplied).isZero();
	return {
		dueAt: dueDate(now, payer.net_terms_days),
		billTo: {
			name: payer.name,
			email: payer.email,
			billing_address: payer.billing_address === null ? null : JSON.parse(payer.billing_address),
		},
		creditsApplied,
		status: settled ? "paid" : "open",
		paidAt: settled ? now : null,
		applications,
		payerAccountId: payer.id,
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
		account_id: application.accountId ?? accountId,
		kind: "application",
		amount_minor: (-application.amountMinor).toString(),
		invoice_id: invoiceId,
	}));
}
