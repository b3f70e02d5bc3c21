/**
 * After a rate is added that is in effect at once: the head accumulators of the active subscriptions whose plan
 * converts by that pair (either direction) are told, so their alerts, budgets and threshold checks use it now
 * (usage-accumulator/parts/rates.ts) instead of at their next refresh, at most 30 s later. Best effort: one not
 * told reads the rate at its next refresh.
 */
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { Env, Environment } from "../env";
import { forEachLimited } from "../lib/concurrency";

const AT_ONCE = 20;
const AT_MOST = 500;

export async function tellAccumulatorsOfRate(
	env: Env,
	environment: Environment,
	pair: { base: string; quote: string },
): Promise<void> {
	const { results } = await env.DB.prepare(
		`SELECT s.id, s.account_id, s.shards FROM subscriptions AS s
		WHERE s.environment = ?1 AND s.status = 'active' AND s.billing_currency IN (?2, ?3)
			AND EXISTS (SELECT 1 FROM rate_plan_versions AS v
				WHERE v.environment = s.environment AND v.currency IN (?2, ?3) AND v.currency <> s.billing_currency
					AND v.rate_plan_id IN (SELECT sp.rate_plan_id FROM subscription_plans AS sp
						WHERE sp.subscription_id = s.id UNION SELECT s.rate_plan_id))
		LIMIT ?4`,
	)
		.bind(environment, pair.base, pair.quote, AT_MOST)
		.all<{ id: string; account_id: string; shards: number }>();
	await forEachLimited(results, AT_ONCE, (s) =>
		usageAccumulator(env, headAccumulator(environment, s.id, s.shards))
			.exchangeRatesChanged(s.account_id)
			.catch((error: unknown) =>
				console.error(JSON.stringify({ at: "exchange-rates.notify", id: s.id, error: String(error) })),
			),
	);
}
