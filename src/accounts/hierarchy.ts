/**
 * Account hierarchies (docs/account-hierarchies.md): two levels at most. A parent exists in the same environment
 * and has no parent itself; an account with children cannot become a child; billing 'parent' needs a parent.
 * Checked here first, with words a user can act on, and again by triggers inside the write (migration 0021), so
 * that two requests at once cannot build three levels or a cycle between them.
 */
import { and, count, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts } from "../db/schema";
import type { Scope } from "../db/scope";
import { conflict } from "../lib/errors";

/** The hierarchy fields of an account as it will be after the write. */
export interface HierarchyFields {
	parentAccountId: string | null;
	billing: "self" | "parent";
}

/** Refuses, with a 409, an account that would break the hierarchy's rules; `id` is null for a new account. */
export async function checkHierarchy(db: Db, scope: Scope, id: string | null, fields: HierarchyFields) {
	const parentId = fields.parentAccountId;
	if (parentId === null) {
		if (fields.billing === "parent")
			throw conflict("billing 'parent' needs a parent account: set parent_account_id, or billing 'self'.");
		return;
	}
	if (parentId === id) throw conflict("An account cannot be its own parent.");
	const [[parent], [children]] = await db.batch([
		db
			.select({ parentAccountId: accounts.parentAccountId })
			.from(accounts)
			.where(and(eq(accounts.environment, scope.environment), eq(accounts.id, parentId))),
		db
			.select({ n: count() })
			.from(accounts)
			.where(and(eq(accounts.environment, scope.environment), eq(accounts.parentAccountId, id ?? ""))),
	]);
	if (!parent) throw conflict(`No account with id '${parentId}' in this environment can be a parent.`);
	if (parent.parentAccountId !== null)
		throw conflict(
			`Account '${parentId}' has a parent itself; hierarchies have two levels, so it cannot be a parent.`,
		);
	if ((children?.n ?? 0) > 0)
		throw conflict(
			"This account has child accounts, so it cannot become a child: hierarchies have two levels.",
		);
}

/** The triggers of migration 0021 refused the write: a concurrent change broke the rules meanwhile. */
export function isHierarchyViolation(error: unknown): boolean {
	return /account_hierarchy/.test(String((error as { cause?: unknown })?.cause ?? "") + String(error));
}

export const hierarchyChanged = () =>
	conflict(
		"Another change to these accounts' hierarchy was made at the same time; nothing was stored. Try again.",
	);
