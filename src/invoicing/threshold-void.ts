/**
 * After a threshold invoice is voided (docs/thresholds-and-recurring-credits.md): "billed" means by invoices that
 * are not void, so the subscription's head accumulator is told what the period's non-void invoices still bill,
 * and judges the period again from there — a period still over its threshold gets a new threshold invoice.
 */
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env } from "../env";
import type { InvoiceView } from "./invoices";
import { billedUsage, thresholdPeriodOf } from "./threshold-invoices";

export async function tellThresholdVoided(
	env: Env,
	db: Db,
	scope: Scope,
	invoice: InvoiceView,
): Promise<void> {
	if (invoice.kind !== "threshold" || invoice.status !== "void") return;
	const found = await thresholdPeriodOf(db, scope, invoice.subscription_id, invoice.billing_period);
	if (!found) return;
	const { subscription, state } = found;
	await usageAccumulator(
		env,
		headAccumulator(scope.environment, subscription.id, subscription.shards),
	).thresholdVoided(subscription.accountId, {
		period: invoice.billing_period,
		billed: billedUsage(state, null).toString(),
	});
}
