/** Builders for the lifecycle tests: instants relative to now that stay valid whatever today's date is. */
import { env } from "cloudflare:workers";

export const DAY_MS = 24 * 60 * 60 * 1000;

export const currentPeriod = () => new Date().toISOString().slice(0, 7);

/** First instant of the month `offset` months from the current one. */
export function monthStart(offset = 0): Date {
	const now = new Date();
	return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
}

export const previousPeriod = () => monthStart(-1).toISOString().slice(0, 7);

/**
 * An instant of the previous month that events may still carry (at most 35 days back): the later of its first
 * hour and 34 days ago.
 */
export function inPreviousMonth(): string {
	const earliest = Math.max(monthStart(-1).getTime() + 60 * 60 * 1000, Date.now() - 34 * DAY_MS);
	return new Date(earliest).toISOString();
}

/**
 * Moves a subscription's start back in time, as `started_at` at creation does: the row, its first plan-history
 * row and its memberships.
 */
export async function backdateSubscription(subscriptionId: string, startedAt: string): Promise<void> {
	await env.DB.batch([
		env.DB.prepare("UPDATE subscriptions SET started_at = ?1, created_at = ?1 WHERE id = ?2").bind(
			startedAt,
			subscriptionId,
		),
		env.DB.prepare(
			"UPDATE subscription_plans SET effective_period = ?1 WHERE subscription_id = ?2 AND effective_period = (SELECT min(effective_period) FROM subscription_plans WHERE subscription_id = ?2)",
		).bind(startedAt.slice(0, 7), subscriptionId),
	]);
}
