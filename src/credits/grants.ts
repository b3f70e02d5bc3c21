/**
 * Prepaid credit grants (docs/billing.md#prepaid-credits). A grant's `remaining` is the sum of its ledger rows (ledger.ts); its
 * status follows from that and from its dates. Reads settle grants that expired first, so that what they show is
 * what an invoice created at the same moment would see.
 */

import { getAccount } from "../accounts/accounts";
import { auditInsert, created } from "../audit/record";
import { abortUnlessChanged, isAbortedByGuard, statement } from "../db/batch";
import type { Db } from "../db/client";
import type { InScope, Page } from "../db/rows";
import type { Scope } from "../db/scope";
import { markStatements, type WriteMark } from "../db/write-once";
import { Decimal } from "../lib/decimal";
import { conflict, notFound, validationError } from "../lib/errors";
import { newId } from "../lib/ids";
import { minorUnits } from "../lib/money";
import { nowIso } from "../lib/time";
import { ledgerInsert, settleGrants } from "./ledger";
import { recurringColumnsUpdate, recurringGrant } from "./recurring";
import { fromMinor, toMinor } from "./wallet";

export type GrantStatus = "active" | "depleted" | "expired" | "void";

export interface CreditGrantView {
	id: string;
	account_id: string;
	amount: number;
	remaining: number;
	currency: string;
	expires_at: string | null;
	description: string | null;
	status: GrantStatus;
	recurrence: "monthly" | null;
	rollover_max: number | null;
	created_at: string;
}

export interface GrantRow {
	id: string;
	account_id: string;
	amount: string;
	currency: string;
	expires_at: string | null;
	description: string | null;
	voided_at: string | null;
	created_at: string;
	remaining: string;
	recurrence?: "monthly" | null;
	rollover_max?: string | null;
	series_id?: string | null;
	recurrence_stopped_at?: string | null;
}

export function grantStatus(row: GrantRow, now: string): GrantStatus {
	if (row.voided_at !== null) return "void";
	if (row.expires_at !== null && row.expires_at <= now) return "expired";
	return BigInt(row.remaining) > 0n ? "active" : "depleted";
}

export function grantView(row: GrantRow, now: string): CreditGrantView {
	return {
		id: row.id,
		account_id: row.account_id,
		amount: Decimal.from(row.amount).toNumber(),
		remaining: fromMinor(BigInt(row.remaining), row.currency).toNumber(),
		currency: row.currency,
		expires_at: row.expires_at,
		description: row.description,
		status: grantStatus(row, now),
		recurrence: row.recurrence ?? null,
		rollover_max: row.rollover_max == null ? null : Decimal.from(row.rollover_max).toNumber(),
		created_at: row.created_at,
	};
}

const GRANT_COLUMNS = `g.id, g.account_id, g.amount, g.currency, g.expires_at, g.description, g.voided_at, g.created_at,
	g.recurrence, g.rollover_max, g.series_id, g.recurrence_stopped_at,
	CAST(COALESCE((SELECT SUM(l.amount_minor) FROM credit_ledger l WHERE l.grant_id = g.id), 0) AS TEXT) AS remaining`;

export interface GrantInput {
	amount: number;
	expires_at?: string;
	description?: string;
	/** docs/thresholds-and-recurring-credits.md: checked by the route (not with expires_at). */
	recurrence?: "monthly" | null;
	rollover_max?: number | null;
	/** Default the account's (docs/currencies.md). */
	currency?: string;
}

/**
 * The inserts of a new grant: its row and the ledger row that gives it its amount, for the caller's batch.
 * `descriptionSql`, when given, is an SQL expression of the description that batch decides (its parameters `?`).
 */
export function grantInsert(
	d1: D1Database,
	environment: string,
	row: GrantRow,
	description: { sql: string; params: unknown[] } = { sql: "?", params: [row.description] },
): D1PreparedStatement[] {
	return [
		statement(
			d1,
			`INSERT INTO credit_grants (id, environment, account_id, amount, currency, expires_at, voided_at, created_at,
				description) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ${description.sql})`,
			row.id,
			environment,
			row.account_id,
			row.amount,
			row.currency,
			row.expires_at,
			row.created_at,
			...description.params,
		),
		...ledgerInsert(
			d1,
			environment,
			[
				{
					id: newId("cle"),
					grant_id: row.id,
					account_id: row.account_id,
					kind: "grant",
					amount_minor: row.remaining,
					invoice_id: null,
				},
			],
			row.created_at,
		),
	];
}

export async function createGrant({
	db,
	scope,
	accountId,
	input,
	mark,
}: InScope & {
	accountId: string;
	input: GrantInput;
	mark?: WriteMark;
}): Promise<CreditGrantView> {
	const account = await getAccount({ db, scope, id: accountId });
	const currency = input.currency ?? account.currency;
	const amount = Decimal.from(input.amount);
	if (amount.scale > minorUnits(currency)) {
		throw validationError(
			"amount",
			`${currency} has ${minorUnits(currency)} decimal places; a grant is money the account can spend.`,
		);
	}
	const now = nowIso();
	const recurring = input.recurrence === "monthly" ? recurringGrant(input, now) : null;
	const expiresAt =
		recurring?.expiresAt ??
		(input.expires_at === undefined ? null : new Date(input.expires_at).toISOString());
	if (expiresAt !== null && expiresAt <= now) throw validationError("expires_at", "Must be in the future.");
	const row: GrantRow = {
		id: newId("cgr"),
		account_id: accountId,
		amount: amount.toString(),
		currency,
		expires_at: expiresAt,
		description: input.description ?? null,
		voided_at: null,
		created_at: now,
		remaining: toMinor(amount, currency).toString(),
		...(recurring?.columns ?? {}),
	};
	const d1 = db.$client;
	await d1.batch([
		...grantInsert(d1, scope.environment, row),
		...(recurring === null ? [] : [recurringColumnsUpdate(d1, row.id, recurring)]),
		...markStatements(mark, d1, [row.id]),
		auditInsert(d1, scope, {
			action: "credit_grant.created",
			resourceId: row.id,
			changes: created({
				account_id: accountId,
				amount: Decimal.from(row.amount).toNumber(),
				currency,
				expires_at: expiresAt,
				description: row.description,
				recurrence: row.recurrence ?? undefined,
				rollover_max: input.rollover_max ?? undefined,
			}),
		}),
	]);
	return grantView(row, now);
}

export async function listGrants({
	db,
	scope,
	accountId,
	limit,
	offset,
}: InScope &
	Page & {
		accountId: string;
	}): Promise<{ items: CreditGrantView[]; total: number }> {
	await getAccount({ db, scope, id: accountId });
	const d1 = db.$client;
	const now = nowIso();
	const [, page, count] = await d1.batch([
		settleGrants(d1, scope.environment, [accountId], now),
		statement(
			d1,
			`SELECT ${GRANT_COLUMNS} FROM credit_grants g WHERE g.environment = ?1 AND g.account_id = ?2
			ORDER BY g.created_at DESC, g.id DESC LIMIT ?3 OFFSET ?4`,
			scope.environment,
			accountId,
			limit,
			offset,
		),
		statement(
			d1,
			"SELECT count(*) AS n FROM credit_grants WHERE environment = ?1 AND account_id = ?2",
			scope.environment,
			accountId,
		),
	]);
	const rows = (page?.results ?? []) as unknown as GrantRow[];
	const total = ((count?.results ?? [])[0] as { n: number } | undefined)?.n ?? 0;
	return { items: rows.map((row) => grantView(row, now)), total };
}

async function readGrant(db: Db, scope: Scope, accountId: string, grantId: string): Promise<GrantRow> {
	const row = await db.$client
		.prepare(
			`SELECT ${GRANT_COLUMNS} FROM credit_grants g WHERE g.environment = ?1 AND g.account_id = ?2 AND g.id = ?3`,
		)
		.bind(scope.environment, accountId, grantId)
		.first<GrantRow>();
	if (!row) throw notFound("credit grant", grantId);
	return row;
}

/**
 * Voids what is left of a grant: only while something is left (else 409). The grant is marked void only if its
 * ledger still sums above zero at that moment, and the void row takes the rest, in one batch.
 */
export async function voidGrant({
	db,
	scope,
	accountId,
	grantId,
	mark,
}: InScope & {
	accountId: string;
	grantId: string;
	mark?: WriteMark;
}): Promise<CreditGrantView> {
	await getAccount({ db, scope, id: accountId });
	const d1 = db.$client;
	const now = nowIso();
	const refuse = (row: GrantRow) =>
		conflict(
			`Credit grant ${grantId} is ${grantStatus(row, now)}; only a grant with credit left can be voided.`,
		);
	const before = await readGrant(db, scope, accountId, grantId);
	// A monthly grant may be voided also when depleted: that stops its recurrence.
	const series = before.series_id ?? null;
	const stoppable = series !== null && before.voided_at === null && before.recurrence_stopped_at === null;
	if (grantStatus(before, now) !== "active" && !stoppable) throw refuse(before);
	try {
		await d1.batch([
			settleGrants(d1, scope.environment, [accountId], now),
			statement(
				d1,
				`UPDATE credit_grants SET voided_at = ?3 WHERE environment = ?1 AND id = ?2 AND voided_at IS NULL
					AND (?4 OR (SELECT SUM(amount_minor) FROM credit_ledger WHERE grant_id = ?2) > 0)`,
				scope.environment,
				grantId,
				now,
				stoppable ? 1 : 0,
			),
			abortUnlessChanged(d1),
			...(series === null
				? []
				: [
						statement(
							d1,
							"UPDATE credit_grants SET recurrence_stopped_at = ?3 WHERE environment = ?1 AND series_id = ?2",
							scope.environment,
							series,
							now,
						),
					]),
			settleGrants(d1, scope.environment, [accountId], now),
			...markStatements(mark, d1, [grantId]),
			auditInsert(d1, scope, {
				action: "credit_grant.voided",
				resourceId: grantId,
				changes: { status: ["active", "void"], voided_at: [null, now] },
			}),
		]);
	} catch (error) {
		if (isAbortedByGuard(error)) throw refuse(await readGrant(db, scope, accountId, grantId));
		throw error;
	}
	return grantView(await readGrant(db, scope, accountId, grantId), now);
}

/** A grant of the account as it stands now (the answer a repeat of its write gets). */
export async function getGrant({
	db,
	scope,
	accountId,
	grantId,
}: InScope & { accountId: string; grantId: string }): Promise<CreditGrantView> {
	return grantView(await readGrant(db, scope, accountId, grantId), nowIso());
}

/** What the account can spend now: the remaining of its active grants, settled first. */
export async function availableCredit(
	db: Db,
	scope: Scope,
	accountId: string,
	currency: string,
): Promise<Decimal> {
	const d1 = db.$client;
	const now = nowIso();
	const [, sum] = await d1.batch([
		settleGrants(d1, scope.environment, [accountId], now),
		statement(
			d1,
			`SELECT CAST(COALESCE(SUM(l.amount_minor), 0) AS TEXT) AS available
			FROM credit_grants g JOIN credit_ledger l ON l.grant_id = g.id
			WHERE g.environment = ?1 AND g.account_id = ?2 AND g.voided_at IS NULL
				AND (g.expires_at IS NULL OR g.expires_at > ?3) AND g.currency = ?4`,
			scope.environment,
			accountId,
			now,
			currency,
		),
	]);
	const available = ((sum?.results ?? [])[0] as { available: string } | undefined)?.available ?? "0";
	return fromMinor(BigInt(available), currency);
}
