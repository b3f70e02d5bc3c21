/**
 * When a subscription was active within a billing period. It starts at started_at and ends when it is cancelled
 * (cancelled_at, or cancel_at once that instant has come); a period is billed only if the two overlap.
 */
import type { PeriodWindow } from "./period";

export interface SubscriptionLifetime {
	startedAt: string;
	/** cancelled_at, or a scheduled cancel_at; null while it runs on. */
	endsAt: string | null;
}

/** The part of the period the subscription was active, as [from, to) in epoch milliseconds; null if none. */
export function activeSpan(
	window: Pick<PeriodWindow, "start" | "end">,
	lifetime: SubscriptionLifetime,
): { from: number; to: number } | null {
	const from = Math.max(Date.parse(window.start), Date.parse(lifetime.startedAt));
	const to = Math.min(
		Date.parse(window.end),
		lifetime.endsAt === null ? Number.POSITIVE_INFINITY : Date.parse(lifetime.endsAt),
	);
	return from < to ? { from, to } : null;
}
