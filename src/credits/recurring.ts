/**
 * Monthly credit grants (docs/thresholds-and-recurring-credits.md). A grant with `recurrence: "monthly"` is the
 * first of a series (its id is the series' id): one grant per billing period, each expiring when the next period
 * begins. The monthly run, right after it has invoiced a period for an account, makes the next period's grant of
 * each of the account's series (renewRecurringGrants): `amount` plus what the period's grant has left, up to
 * `rollover_max`; the period's grant is settled (its rest expires) in the same batch. A period's grant keeps
 * paying its own period's invoices after it expired (the monthly run's, supplementary ones) until then, and no
 * others (wallet.ts). Renewing twice makes nothing: a series has one grant per period (a unique index), and the
 * ledger rows have ids derived from the grants.
 */
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { statement } from "../db/batch";
import type { Db } from "../db/client";
import { creditGrants } from "../db/schema";
import type { Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { addPeriods, periodBounds, periodOf } from "../lib/time";
import { fromMinor, toMinor } from "./wallet";

export interface RecurringGrant {
	expiresAt: string;
	columns: { recurrence: "monthly"; rollover_max: string | null; series_id: null; period: string };
}

/** The first grant of a series: for the current period, expiring when the next begins. */
export function recurringGrant(input: { rollover_max?: number | null }, now: string): RecurringGrant {
	const period = periodOf(now);
	return {
		expiresAt: periodBounds(period).end,
		columns: {
			recurrence: "monthly",
			rollover_max:
				input.rollover_max === undefined || input.rollover_max === null
					? null
					: Decimal.from(input.rollover_max).toString(),
			series_id: null,
			period,
		},
	};
}

/** Marks a new grant as the first of its series, in the batch that inserts it. */
export function recurringColumnsUpdate(d1: D1Database, grantId: string, grant: RecurringGrant) {
	return statement(
		d1,
		"UPDATE credit_grants SET recurrence = ?2, rollover_max = ?3, series_id = ?1, period = ?4 WHERE id = ?1",
		grantId,
		grant.columns.recurrence,
		grant.columns.rollover_max,
		grant.columns.period,
	);
}

interface SeriesRow {
	id: string;
	series_id: string;
	account_id: string;
	currency: string;
	description: string | null;
	rollover_max: string | null;
	base_amount: string;
	remaining: string;
}

/** The id of a series' grant for a period: one per period, whoever makes it. */
const grantIdOf = (seriesId: string, period: string) => `${seriesId}_${period.replace("-", "")}`;

/**
 * Makes the grants for the period after `period` of the account's monthly series whose recurrence goes on, with
 * their rollover, and settles the period's grants: one atomic batch. Returns how many grants it made.
 */
export async function renewRecurringGrants(
	db: Db,
	scope: Scope,
	accountId: string,
	period: string,
	now: string,
): Promise<number> {
	const d1 = db.$client;
	const rows = (
		await d1
			.prepare(
				`SELECT g.id, g.series_id, g.account_id, g.currency, g.description, g.rollover_max,
					(SELECT s.amount FROM credit_grants s WHERE s.id = g.series_id) AS base_amount,
					CAST(COALESCE((SELECT SUM(l.amount_minor) FROM credit_ledger l WHERE l.grant_id = g.id), 0) AS TEXT)
						AS remaining
				FROM credit_grants g
				WHERE g.environment = ?1 AND g.account_id = ?2 AND g.period = ?3 AND g.series_id IS NOT NULL
					AND g.recurrence_stopped_at IS NULL AND g.voided_at IS NULL
					AND NOT EXISTS (SELECT 1 FROM credit_grants n WHERE n.series_id = g.series_id AND n.period = ?4)`,
			)
			.bind(scope.environment, accountId, period, addPeriods(period, 1))
			.all<SeriesRow>()
	).results;
	if (rows.length === 0) return 0;
	const next = addPeriods(period, 1);
	const expiresAt = periodBounds(next).end;
	const statements = rows.flatMap((row) => {
		const leftMinor = BigInt(row.remaining);
		const capMinor = row.rollover_max === null ? 0n : toMinor(Decimal.from(row.rollover_max), row.currency);
		const rolloverMinor = leftMinor < capMinor ? leftMinor : capMinor;
		const amountMinor = toMinor(Decimal.from(row.base_amount), row.currency) + rolloverMinor;
		const amount = fromMinor(amountMinor, row.currency).toString();
		const id = grantIdOf(row.series_id, next);
		return [
			statement(
				d1,
				`INSERT OR IGNORE INTO credit_grants (id, environment, account_id, amount, currency, expires_at, voided_at,
					created_at, description, recurrence, rollover_max, series_id, period)
				VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, 'monthly', ?9, ?10, ?11)`,
				id,
				scope.environment,
				row.account_id,
				amount,
				row.currency,
				expiresAt,
				now,
				row.description,
				row.rollover_max,
				row.series_id,
				next,
			),
			statement(
				d1,
				`INSERT OR IGNORE INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor, invoice_id,
					created_at) VALUES ('cle_' || ?1, ?2, ?1, ?3, 'grant', ?4, NULL, ?5)`,
				id,
				scope.environment,
				row.account_id,
				amountMinor.toString(),
				now,
			),
			// What the period's grant has left expires; the part rolled over lives on in the new grant.
			...(leftMinor > 0n
				? [
						statement(
							d1,
							`INSERT OR IGNORE INTO credit_ledger (id, environment, grant_id, account_id, kind, amount_minor,
								invoice_id, created_at) VALUES ('cle_' || ?1 || '_expiry', ?2, ?1, ?3, 'expiry', ?4, NULL, ?5)`,
							row.id,
							scope.environment,
							row.account_id,
							(-leftMinor).toString(),
							now,
						),
					]
				: []),
		];
	});
	await d1.batch(statements);
	return rows.length;
}

/**
 * The accounts, of every environment, with a monthly series that goes on past `period`: the monthly run renews
 * them whether or not the account has a subscription.
 */
export function accountsWithSeries(
	db: Db,
	period: string,
): Promise<{ environment: string; accountId: string }[]> {
	return db
		.selectDistinct({ environment: creditGrants.environment, accountId: creditGrants.accountId })
		.from(creditGrants)
		.where(
			and(
				eq(creditGrants.period, period),
				isNotNull(creditGrants.seriesId),
				isNull(creditGrants.recurrenceStoppedAt),
				isNull(creditGrants.voidedAt),
			),
		);
}
