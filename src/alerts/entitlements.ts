/**
 * GET /v1/entitlements (docs/pricing.md#alerts-and-budgets): may this agent instance go on? An agent asks before expensive work, so the answer
 * costs no D1 read on the hot path: the instance's accumulator comes from the isolate's route cache (the same one
 * ingest uses), and the accumulator answers from memory which of its block alerts triggered this period, and
 * how much of the tightest budget is left once spent and held (reservations).
 */
import type { Scope } from "../db/scope";
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import type { BudgetView } from "../durable-objects/usage-accumulator/parts/reservations";
import { routesFor } from "../durable-objects/usage-accumulator/placement";
import type { Env } from "../env";
import { stripeSecretKey } from "../payment-provider/config";

export interface Entitlement {
	agent_key: string;
	subscription_id: string | null;
	allowed: boolean;
	blocked_by: string[];
	/** The tightest block alert on the total amount, with what is spent and held (docs/reservations.md). */
	budget: BudgetView | null;
}

export async function entitlementOf({
	env,
	scope,
	agentKey,
}: {
	env: Env;
	scope: Scope;
	agentKey: string;
}): Promise<Entitlement> {
	const route = (await routesFor(env.DB, scope, [agentKey])).get(agentKey);
	if (!route || route.subscriptionId === null) {
		return { agent_key: agentKey, subscription_id: null, allowed: true, blocked_by: [], budget: null };
	}
	// A sharded subscription's alerts live in its head (shard 0), whichever shard counts this instance.
	const head = headAccumulator(scope.environment, route.subscriptionId, route.shards);
	const [{ blockedBy: alerts, budget }, unpaid] = await Promise.all([
		usageAccumulator(env, head).entitlement(),
		failedCollections(env, scope, route.subscriptionId),
	]);
	const blockedBy = [...alerts, ...unpaid];
	return {
		agent_key: agentKey,
		subscription_id: route.subscriptionId,
		allowed: blockedBy.length === 0 && (budget === null || budget.available > 0),
		blocked_by: blockedBy,
		budget,
	};
}

/**
 * The invoices whose collection through Stripe failed, whose payer asked to be blocked then
 * (docs/payments.md#dunning). Only environments with a Stripe key read D1 for it; a partial index keeps it small.
 */
async function failedCollections(env: Env, scope: Scope, subscriptionId: string): Promise<string[]> {
	if (stripeSecretKey(env, scope.environment) === null) return [];
	const { results } = await env.DB.prepare(
		`SELECT i.id FROM subscriptions s
		JOIN invoices i ON i.environment = ?1 AND i.account_id = s.account_id AND i.collection_status = 'failed'
		JOIN accounts a ON a.id = COALESCE(i.payer_account_id, i.account_id) AND a.block_on_failed_payment = 1
		WHERE s.environment = ?1 AND s.id = ?2
		ORDER BY i.created_at, i.id`,
	)
		.bind(scope.environment, subscriptionId)
		.all<{ id: string }>();
	return results.map((row) => row.id);
}
