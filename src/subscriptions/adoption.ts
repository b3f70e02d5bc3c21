/**
 * `adopt_unbilled_usage` (docs/billing.md#subscription-lifecycle): a new subscription takes over what its instances did outside every
 * subscription since its `started_at`. The subscription is created with `adopt_pending` set; this moves each
 * instance's events from its own accumulator into the subscription's (durable-objects/usage-accumulator/
 * adoption.ts says how each step can be repeated), then clears the flag. The request that creates the
 * subscription runs it; when that fails part-way, the 5-minute cron runs it again. Runs that overlap, or repeat
 * one that failed anywhere, count every event once.
 */
import type { Scope } from "../db/scope";
import {
	accumulatorName,
	membershipGeneration,
	subscriptionAccumulatorOf,
	usageAccumulator,
} from "../durable-objects/usage-accumulator/handle";
import { ADOPTION_PAGE_SIZE } from "../durable-objects/usage-accumulator/parts/adoption";
import type { Env, Environment } from "../env";

/** Instances adopted at once within one subscription, and pending subscriptions per cron run. */
const IN_PARALLEL = 10;
const MAX_PER_RUN = 100;

interface PendingAdoption {
	started_at: string;
	account_id: string;
	adopt_pending: number;
	shards: number;
	/** JSON: [[agent_key, membership id], …] of the memberships opened with the subscription. */
	instances: string;
}

export async function adoptUnbilledUsage(env: Env, scope: Scope, subscriptionId: string): Promise<void> {
	const row = await env.DB.prepare(
		`SELECT s.started_at, s.account_id, s.adopt_pending, s.shards,
			json_group_array(json_array(m.agent_key, m.id)) FILTER (WHERE m.id IS NOT NULL) AS instances
		FROM subscriptions AS s
		LEFT JOIN subscription_instances AS m ON m.subscription_id = s.id AND m.added_at = s.created_at
		WHERE s.id = ?1 AND s.environment = ?2
		GROUP BY s.id`,
	)
		.bind(subscriptionId, scope.environment)
		.first<PendingAdoption>();
	if (row?.adopt_pending !== 1) return;
	const instances = JSON.parse(row.instances ?? "[]") as [string, number][];

	const adoptInstance = async ([agentKey, membershipId]: [string, number]) => {
		// The shard of the subscription that counts this instance.
		const subscriptionName = subscriptionAccumulatorOf(
			scope.environment,
			subscriptionId,
			row.shards,
			agentKey,
		);
		const subscription = usageAccumulator(env, subscriptionName);
		const own = usageAccumulator(env, accumulatorName(scope.environment, { agentKey }));
		for (;;) {
			const through = await subscription.absorbedThrough(agentKey);
			const page = await own.setAsideFor(
				{ subscriptionId, from: row.started_at, generation: membershipGeneration.opened(membershipId) },
				through,
				ADOPTION_PAGE_SIZE,
			);
			if (page.length === 0) return;
			await subscription.absorb({ accountId: row.account_id, billableFrom: row.started_at, agentKey }, page);
			if (page.length < ADOPTION_PAGE_SIZE) return;
		}
	};
	for (let i = 0; i < instances.length; i += IN_PARALLEL) {
		await Promise.all(instances.slice(i, i + IN_PARALLEL).map(adoptInstance));
	}
	await env.DB.prepare("UPDATE subscriptions SET adopt_pending = 0 WHERE id = ?1 AND environment = ?2")
		.bind(subscriptionId, scope.environment)
		.run();
}

/** Invoicing's part: finishes the pending adoptions among these subscriptions (one D1 read when there are none). */
export async function finishPendingAdoptions(
	env: Env,
	scope: Scope,
	subscriptionIds: string[],
): Promise<void> {
	const { results } = await env.DB.prepare(
		"SELECT id FROM subscriptions WHERE adopt_pending = 1 AND id IN (SELECT value FROM json_each(?1))",
	)
		.bind(JSON.stringify(subscriptionIds))
		.all<{ id: string }>();
	for (const { id } of results) await adoptUnbilledUsage(env, scope, id);
}

/** The cron's part: every subscription whose adoption a failure left pending. */
export async function adoptPendingUsage(env: Env): Promise<void> {
	const { results } = await env.DB.prepare(
		"SELECT id, environment FROM subscriptions WHERE adopt_pending = 1 ORDER BY created_at LIMIT ?",
	)
		.bind(MAX_PER_RUN)
		.all<{ id: string; environment: Environment }>();
	const failed: string[] = [];
	for (let i = 0; i < results.length; i += IN_PARALLEL) {
		const settled = await Promise.allSettled(
			results
				.slice(i, i + IN_PARALLEL)
				.map(({ id, environment }) => adoptUnbilledUsage(env, { environment }, id)),
		);
		settled.forEach((result, j) => {
			if (result.status === "rejected") failed.push(`${results[i + j]?.id}: ${String(result.reason)}`);
		});
	}
	if (failed.length > 0) console.error(JSON.stringify({ at: "adoptPendingUsage", failed }));
}
