/**
 * Who pays an account's invoices and whose credits pay them (docs/account-hierarchies.md), as issuing reads it:
 * - billing 'parent': the parent is billed (bill-to, payment provider) and only the parent's grants pay;
 * - billing 'self' with use_parent_credits: the account's own grants first, then the parent's;
 * - otherwise the account alone.
 */
import { statement } from "../db/batch";

export interface HierarchyAccountRow {
	id: string;
	name: string;
	email: string;
	billing_address: string | null;
	net_terms_days: number;
	billing: "self" | "parent";
	parent_account_id: string | null;
	use_parent_credits: number | boolean;
}

/** The accounts with these ids and their parents, in one statement. */
export function accountsWithParentsQuery(d1: D1Database, environment: string, accountIds: readonly string[]) {
	return statement(
		d1,
		`SELECT id, name, email, billing_address, net_terms_days, billing, parent_account_id, use_parent_credits
		FROM accounts WHERE environment = ?1 AND (id IN (SELECT value FROM json_each(?2))
			OR id IN (SELECT parent_account_id FROM accounts
				WHERE environment = ?1 AND id IN (SELECT value FROM json_each(?2))))`,
		environment,
		JSON.stringify(accountIds),
	);
}

/** The account that pays an account's invoices: its parent under billing 'parent', else itself. */
export function payerIdOf(
	account: Pick<HierarchyAccountRow, "id" | "billing" | "parent_account_id">,
): string {
	return account.billing === "parent" && account.parent_account_id !== null
		? account.parent_account_id
		: account.id;
}

/** The accounts whose grants pay an account's invoices, in the order they pay. */
export function creditSourcesOf(
	account: Pick<HierarchyAccountRow, "id" | "billing" | "parent_account_id" | "use_parent_credits">,
): string[] {
	const parent = account.parent_account_id;
	if (parent === null) return [account.id];
	if (account.billing === "parent") return [parent];
	return account.use_parent_credits ? [account.id, parent] : [account.id];
}
