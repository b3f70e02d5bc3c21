/**
 * Unbilled usage (docs/billing.md#subscription-lifecycle, GET /v1/usage/unbilled): what instances did outside every subscription — counted by their
 * own accumulators, whose aggregates reach D1 without a subscription — per instance, kind and type, for one
 * billing period. D1 has it once the accumulators flushed (seconds after the events).
 */
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { Decimal } from "../lib/decimal";
import { periodBounds } from "../lib/time";

export interface UnbilledLine {
	agent_key: string;
	kind: "action" | "outcome";
	type: string;
	count: number;
	/** Sum of outcome values; null for actions. */
	value: number | null;
}

export async function readUnbilledUsage(env: Env, scope: Scope, period: string): Promise<UnbilledLine[]> {
	const { start, end } = periodBounds(period);
	// An instance whose usage was adopted (docs/billing.md#subscription-lifecycle) keeps rows of count 0: it has nothing unbilled left.
	const { results } = await env.DB.prepare(
		`SELECT agent_key, kind, type, count, sum FROM usage_daily
		WHERE environment = ?1 AND subscription_id IS NULL AND field = '' AND day >= ?2 AND day < ?3 AND count <> 0`,
	)
		.bind(scope.environment, start.slice(0, 10), end.slice(0, 10))
		.all<{ agent_key: string; kind: "action" | "outcome"; type: string; count: number; sum: string }>();
	const lines = new Map<string, { line: UnbilledLine; sum: Decimal }>();
	for (const row of results) {
		const key = JSON.stringify([row.agent_key, row.kind, row.type]);
		const entry = lines.get(key) ?? {
			line: { agent_key: row.agent_key, kind: row.kind, type: row.type, count: 0, value: null },
			sum: Decimal.ZERO,
		};
		entry.line.count += row.count;
		entry.sum = entry.sum.add(Decimal.from(row.sum));
		lines.set(key, entry);
	}
	return [...lines.values()]
		.map(({ line, sum }) => ({ ...line, value: line.kind === "outcome" ? sum.toNumber() : null }))
		.sort((a, b) =>
			a.agent_key !== b.agent_key
				? a.agent_key < b.agent_key
					? -1
					: 1
				: a.kind !== b.kind
					? a.kind < b.kind
						? -1
						: 1
					: a.type < b.type
						? -1
						: a.type > b.type
							? 1
							: 0,
		);
}
