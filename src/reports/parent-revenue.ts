/**
 * Revenue by parent account (docs/account-hierarchies.md#revenue-by-parent-account): each account's revenue,
 * as group_by=customer counts it, under its parent as the hierarchy stands now; an account without a parent
 * under itself. The rows add up to the report's revenue exactly: only whole account totals are moved.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Decimal } from "../lib/decimal";
import { type BreakdownItem, namedBreakdown, type RevenueLine, revenueTotals } from "./revenue";

export async function revenueByParentAccount(
	db: Db,
	scope: Scope,
	lines: RevenueLine[],
	currency: string,
): Promise<BreakdownItem[]> {
	const byAccount = revenueTotals(lines, "customer", currency);
	const ids = JSON.stringify([...byAccount.keys()]);
	// The accounts and their parents, in one statement (a JSON parameter: more than 100 ids may come).
	const rows = await db
		.select({ id: accounts.id, name: accounts.name, parentAccountId: accounts.parentAccountId })
		.from(accounts)
		.where(
			inScope(
				scope,
				accounts,
				sql`(${accounts.id} IN (SELECT value FROM json_each(${ids})) OR ${accounts.id} IN (
					SELECT parent_account_id FROM accounts WHERE id IN (SELECT value FROM json_each(${ids}))))`,
			),
		);
	const parentOf = new Map(rows.map((row) => [row.id, row.parentAccountId ?? row.id]));
	const totals = new Map<string | null, Decimal>();
	for (const [accountId, revenue] of byAccount) {
		const key = accountId === null ? null : (parentOf.get(accountId) ?? accountId);
		const sum = totals.get(key);
		totals.set(key, sum === undefined ? revenue : sum.add(revenue));
	}
	return namedBreakdown(totals, new Map(rows.map((row) => [row.id, row.name])));
}
