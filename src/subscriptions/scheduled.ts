/**
 * Cancellations at period end (docs/billing.md#subscription-lifecycle): the cron cancels every active subscription whose cancel_at has
 * come, as of that instant, emitting subscription.cancelled then. It runs first thing in the monthly run (so the
 * invoices of the period that just ended see the final state) and in the five-minute sweep, which catches up if
 * a run failed. Each cancellation is guarded like a request's, so runs that overlap never cancel twice.
 */
import { and, asc, eq, isNotNull, lte } from "drizzle-orm";
import { database } from "../db/client";
import { subscriptions } from "../db/schema";
import type { Env, Environment } from "../env";
import { dispatchOutbox } from "../webhooks/dispatch";
import { cancelScheduled } from "./cancel";

/** Per run; what is left waits for the next sweep five minutes later. */
const MAX_PER_RUN = 500;
const IN_PARALLEL = 10;

/** The ids cancelled by this run. */
export async function cancelDueSubscriptions(env: Env, now: Date): Promise<string[]> {
	const db = database(env.DB);
	const at = now.toISOString();
	const due = await db
		.select({ id: subscriptions.id, environment: subscriptions.environment })
		.from(subscriptions)
		.where(
			and(
				isNotNull(subscriptions.cancelAt),
				lte(subscriptions.cancelAt, at),
				eq(subscriptions.status, "active"),
			),
		)
		.orderBy(asc(subscriptions.cancelAt), asc(subscriptions.id))
		.limit(MAX_PER_RUN);
	const cancelled: string[] = [];
	for (let i = 0; i < due.length; i += IN_PARALLEL) {
		const results = await Promise.allSettled(
			due
				.slice(i, i + IN_PARALLEL)
				.map(({ id, environment }) =>
					cancelScheduled({ env, db, scope: { environment: environment as Environment }, id, now: at }),
				),
		);
		for (const [n, result] of results.entries()) {
			if (result.status === "fulfilled" && result.value !== null) cancelled.push(result.value.id);
			if (result.status === "rejected") {
				const id = due[i + n]?.id;
				console.error(JSON.stringify({ at: "cancel-at-period-end", id, error: String(result.reason) }));
			}
		}
	}
	if (cancelled.length > 0) await dispatchOutbox(env);
	return cancelled;
}
