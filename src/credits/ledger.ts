/**
 * The credit ledger (docs/billing.md#prepaid-credits): every movement of a grant's balance is a row — grant (+), application to an
 * invoice (−), reversal of an application by a void (+), expiry (−), void (−) — so a grant's `remaining` is the
 * sum of its rows and can be explained line by line. Rows are written in the same D1 batch as the change that
 * causes them. A trigger (migration 0005) aborts any batch that would take a grant below zero: that is what
 * stops two invoices created at once from spending the same credit (the loser is planned again).
 */
import { chunkJsonRows, statement } from "../db/batch";
import type { SpendableGrant } from "./wallet";

export type LedgerKind = "grant" | "application" | "reversal" | "expiry" | "void";

export interface LedgerRow {
	id: string;
	grant_id: string;
	account_id: string;
	kind: LedgerKind;
	/** Signed, in minor units, as decimal digits (JSON numbers lose precision past 2^53). */
	amount_minor: string;
	invoice_id: string | null;
}

export function isCreditOverdrawn(error: unknown): boolean {
	return /credit_overdrawn/.test(String((error as { cause?: unknown })?.cause ?? "") + String(error));
}

/** Inserts ledger rows, one statement per ~90 KB of rows. */
export function ledgerInsert(
	d1: D1Database,
	environment: string,
	rows: readonly LedgerRow[],
	createdAt: string,
): D1PreparedStatement[] {
	if (rows.length === 0) return [];
	return chunkJsonRows(rows.map((row) => JSON.stringify(row))).map((group) =>
		statement(
			d1,
			`INSERT INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, invoice_id, created_at)
			SELECT r.value ->> '$.id', ?1, r.value ->> '$.grant_id', r.value ->> '$.account_id', r.value ->> '$.kind',
				CAST(r.value ->> '$.amount_minor' AS INTEGER), r.value ->> '$.invoice_id', ?2
			FROM json_each(?3) AS r`,
			environment,
			createdAt,
			`[${group.join(",")}]`,
		),
	);
}

/** A statement over the grants of some accounts of an environment, as of `now`. */
type GrantsStatement = (
	d1: D1Database,
	environment: string,
	accountIds: readonly string[],
	now: string,
) => D1PreparedStatement;

/**
 * `head` (a SELECT, or an INSERT … SELECT) over the grants of these accounts that still hold something and meet
 * `condition`, one row per grant with its ledger rows as `l`. Binds ?1 the environment, ?2 the account ids, ?3 now.
 */
function overHeldGrants(head: string, condition: string): GrantsStatement {
	return (d1, environment, accountIds, now) =>
		statement(
			d1,
			`${head}
		FROM credit_grants g JOIN credit_ledger l ON l.grant_id = g.id
		WHERE g.environment = ?1 AND g.account_id IN (SELECT value FROM json_each(?2)) AND ${condition}
		GROUP BY g.id HAVING SUM(l.amount_minor) > 0`,
			environment,
			JSON.stringify(accountIds),
			now,
		);
}

/**
 * Writes the expiry (or void) row of every grant of these accounts that has expired (or was voided) and still
 * holds something, so that its balance reads 0 from then on. Idempotent: a settled grant sums to 0.
 */
export const settleGrants = overHeldGrants(
	`INSERT INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, invoice_id, created_at)
		SELECT 'cle_' || lower(hex(randomblob(13))), g.environment, g.id, g.account_id,
			CASE WHEN g.voided_at IS NOT NULL THEN 'void' ELSE 'expiry' END, -SUM(l.amount_minor), NULL, ?3`,
	// A monthly grant is settled by its renewal (recurring.ts): until then it pays its period's late invoices.
	"(g.voided_at IS NOT NULL OR (g.expires_at <= ?3 AND g.period IS NULL))",
);

interface SpendableRow {
	id: string;
	account_id: string;
	expires_at: string | null;
	created_at: string;
	remaining: string;
	currency: string;
	period: string | null;
}

/** The grants of these accounts that can pay now: not void, not expired, something left. */
export const spendableGrantsQuery = overHeldGrants(
	"SELECT g.id, g.account_id, g.expires_at, g.created_at, g.period, CAST(SUM(l.amount_minor) AS TEXT) AS remaining, g.currency",
	"g.voided_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > ?3 OR g.period IS NOT NULL)",
);

export function spendableGrants(result: D1Result | undefined): SpendableGrant[] {
	return ((result?.results ?? []) as unknown as SpendableRow[]).map((row) => ({
		id: row.id,
		accountId: row.account_id,
		remainingMinor: BigInt(row.remaining),
		expiresAt: row.expires_at,
		createdAt: row.created_at,
		currency: row.currency,
		period: row.period,
	}));
}
