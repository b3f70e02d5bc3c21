/**
 * Invoices not issued for want of an exchange rate (docs/currencies.md): generation records the subscription's
 * period here, and forgets it once the period is invoiced; the five-minute cron generates past periods that
 * still wait, so they are issued once a rate is in effect.
 */
import { asc, lt, sql } from "drizzle-orm";
import { type Db, database } from "../db/client";
import { conversionWaits } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Env } from "../env";
import { nowIso, periodOf } from "../lib/time";
import type { SubscriptionPeriodState } from "./computed";
import type { RefusedState } from "./conversions";

const WAITS_PER_RUN = 50;

export async function recordConversionWaits(
	db: Db,
	scope: Scope,
	period: string,
	{ ready, refused }: { ready: readonly SubscriptionPeriodState[]; refused: readonly RefusedState[] },
): Promise<void> {
	const now = nowIso();
	const statements = [];
	if (refused.length > 0) {
		const rows = refused.map(({ state, from, to }) => ({
			environment: scope.environment,
			subscriptionId: state.subscriptionId,
			accountId: state.accountId,
			billingPeriod: period,
			base: from,
			quote: to,
			createdAt: now,
		}));
		statements.push(db.insert(conversionWaits).values(rows).onConflictDoNothing());
	}
	if (ready.length > 0) {
		const ids = JSON.stringify(ready.map((s) => s.subscriptionId));
		statements.push(
			db
				.delete(conversionWaits)
				.where(
					inScope(
						scope,
						conversionWaits,
						sql`${conversionWaits.billingPeriod} = ${period}`,
						sql`${conversionWaits.subscriptionId} IN (SELECT value FROM json_each(${ids}))`,
					),
				),
		);
	}
	const [first, ...rest] = statements;
	if (first) await db.batch([first, ...rest]);
}

/** The cron's part: generates the waiting past periods, one account and period at a time. */
export async function issueWaitingInvoices(env: Env, at: Date): Promise<void> {
	// Imported here: generation itself records the waits (a static import would make a cycle).
	const { generateInvoicesForPeriod } = await import("./generate");
	const db = database(env.DB);
	const waits = await db
		.selectDistinct({
			environment: conversionWaits.environment,
			accountId: conversionWaits.accountId,
			billingPeriod: conversionWaits.billingPeriod,
		})
		.from(conversionWaits)
		.where(lt(conversionWaits.billingPeriod, periodOf(at.toISOString())))
		.orderBy(asc(conversionWaits.billingPeriod))
		.limit(WAITS_PER_RUN);
	for (const wait of waits) {
		try {
			await generateInvoicesForPeriod({
				env,
				scope: { environment: wait.environment as "live" | "test" },
				billingPeriod: wait.billingPeriod,
				accountId: wait.accountId,
				now: at,
			});
		} catch (error) {
			console.error(JSON.stringify({ at: "conversion-waits", wait, error: String(error) }));
		}
	}
}
