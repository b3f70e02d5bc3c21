/**
 * A subscription's invoicing threshold (docs/thresholds-and-recurring-credits.md): stored on its row as an exact
 * decimal and told to its head accumulator, which judges it after each counting pass. It applies at once.
 */
import type { Scope } from "../db/scope";
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import type { SubscriptionView } from "./views";

/** The column's value: the exact decimal of the amount, or null for none. */
export function storedThreshold(threshold: number | null): string | null {
	return threshold === null ? null : Decimal.from(threshold).toString();
}

/**
 * Tells the head accumulator the threshold, after the row is stored. Should the accumulator be unreachable, the
 * request fails; a PATCH that gives the threshold tells it again even when the row already has it.
 */
export async function tellThreshold(env: Env, scope: Scope, view: SubscriptionView): Promise<void> {
	const head = headAccumulator(scope.environment, view.id, view.shards);
	await usageAccumulator(env, head).setInvoicingThreshold(
		view.account_id,
		storedThreshold(view.invoicing_threshold),
	);
}
