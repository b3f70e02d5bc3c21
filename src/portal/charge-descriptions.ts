/**
 * What the portal calls each charge of a period so far: what the invoice will call it (invoicing/descriptions.ts),
 * without the quantities, since those stand in their own column. A charge the plan gave no description is named
 * from its metric id, made readable ("tool_calls" → "Tool calls").
 */

import { BASE_FEE_DESCRIPTION, MINIMUM_DESCRIPTION } from "../invoicing/descriptions";
import type { Charge } from "../pricing/charges";
import { DISCOUNT_METRIC } from "../pricing/period-discount";
import { BASE_FEE_METRIC, MINIMUM_METRIC } from "../pricing/rate";

const FIXED: Record<string, string> = {
	[BASE_FEE_METRIC]: BASE_FEE_DESCRIPTION,
	[MINIMUM_METRIC]: MINIMUM_DESCRIPTION,
	[DISCOUNT_METRIC]: "Discount",
};

/** "tool_calls" → "Tool calls"; "gpt-4o.tokens" → "Gpt 4o tokens". */
export function readableMetric(metric: string): string {
	const words = metric.replace(/[_.:-]+/g, " ").trim();
	return words.charAt(0).toUpperCase() + words.slice(1);
}

export function chargeDescriptions(
	rated: readonly { metric: string }[],
	charges: readonly Charge[],
): Record<string, string> {
	const byMetric = new Map(charges.map((charge) => [charge.metric, charge.description?.trim()]));
	return Object.fromEntries(
		rated.map(({ metric }) => [metric, FIXED[metric] ?? (byMetric.get(metric) || readableMetric(metric))]),
	);
}
